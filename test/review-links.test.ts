import { createHash } from 'node:crypto';
import { Client } from 'pg';
import request from 'supertest';
import { bootTestApp, TestApp } from './support/app';
import { bearer } from './support/config';
import { createPost, createWebhookAccount } from './support/engine';
import { newWorkspace, Workspace } from './support/mail';
import { csrfOf, setCookie } from './support/settings-http';

/**
 * Comments on posts and client review links (docs/api.md, "Comments and review links"), over
 * the API with real PostgreSQL, and the review page at /review/:token over plain HTTP, as an
 * attacker would try it: no session, wrong, expired and revoked tokens, a token for one post
 * used on another, forged forms, a flood.
 *
 * The app trusts a proxy on loopback, so each test is its own client address (X-Forwarded-For):
 * the page's rate limit counts per address.
 */
describe('comments and client review links', () => {
  let t: TestApp;
  let db: Client;
  let ws: Workspace;
  let other: Workspace;
  let accountId: string;
  let clients = 0;
  const later = () => new Date(Date.now() + 86_400_000).toISOString();
  /** A client address of its own for a test. */
  const client = () => `198.51.100.${++clients}`;

  beforeAll(async () => {
    t = await bootTestApp({ config: { allowPrivateUrls: true, trustProxy: ['loopback'], publicUrl: 'http://herald.example.com' } });
    db = new Client({ connectionString: t.databaseUrl });
    await db.connect();
    ws = await newWorkspace(t, 'Agency');
    other = await newWorkspace(t, 'Other agency');
    accountId = (await createWebhookAccount(t, ws.key, 'http://127.0.0.1:9/hook')).id;
  });
  afterAll(async () => {
    await db.end();
    await t.close();
  });

  const newPost = (text: string, key = ws.key, account = accountId) =>
    createPost(t, key, { text, scheduledAt: later(), targets: [{ accountId: account }] });
  const makeLink = async (postId: string, body: Record<string, unknown> = {}) => {
    const res = await t.http().post(`/v1/posts/${postId}/share-links`).set(bearer(ws.key)).send(body);
    expect(res.status).toBe(201);
    return res.body as { id: string; token: string; url: string; expiresAt: string; createdAt: string; postIds: string[] };
  };
  /** A browser without any cookie, from its own address. */
  const stranger = () => {
    const agent = request.agent(t.app.getHttpServer());
    const from = client();
    return {
      agent,
      get: (url: string) => agent.get(url).set('X-Forwarded-For', from),
      post: (url: string) => agent.post(url).set('X-Forwarded-For', from).type('form'),
    };
  };
  const commentCount = async (postId: string) =>
    Number((await db.query(`SELECT count(*) AS n FROM post_comments WHERE post_id = $1`, [postId])).rows[0].n);

  describe('comments', () => {
    it('signs a comment with the key that wrote it, lists them oldest first, and records it in the audit trail', async () => {
      const post = await newPost('Comments here');
      const first = await t.http().post(`/v1/posts/${post.id}/comments`).set(bearer(ws.key)).send({ body: 'First thought' }).expect(201);
      expect(first.body).toMatchObject({
        postId: post.id,
        body: 'First thought',
        verdict: null,
        author: { kind: 'key', shareLinkId: null },
      });
      expect(first.body.author.name).toMatch(/key/);
      await t.http().post(`/v1/posts/${post.id}/comments`).set(bearer(ws.key)).send({ body: 'Second thought' }).expect(201);
      const list = await t.http().get(`/v1/posts/${post.id}/comments`).set(bearer(ws.key)).expect(200);
      expect(list.body.data.map((c: { body: string }) => c.body)).toEqual(['First thought', 'Second thought']);
      expect(list.body.nextCursor).toBeNull();
      const page1 = await t.http().get(`/v1/posts/${post.id}/comments?limit=1`).set(bearer(ws.key)).expect(200);
      const page2 = await t
        .http()
        .get(`/v1/posts/${post.id}/comments?limit=1&cursor=${page1.body.nextCursor}`)
        .set(bearer(ws.key))
        .expect(200);
      expect([page1.body.data[0].body, page2.body.data[0].body]).toEqual(['First thought', 'Second thought']);
      const audit = await t.http().get(`/v1/audit?limit=50`).set(bearer(ws.key)).expect(200);
      expect(audit.body.data.some((e: { action: string; subjectId: string }) => e.action === 'commented' && e.subjectId === post.id)).toBe(
        true,
      );
    });

    it('refuses an empty, blank, missing or too long comment with a 400 naming body, and saves nothing', async () => {
      const post = await newPost('No empty comments');
      for (const body of [{}, { body: '' }, { body: '   ' }, { body: 'x'.repeat(2001) }, { body: 42 }, { body: 'ok', extra: 1 }]) {
        const res = await t.http().post(`/v1/posts/${post.id}/comments`).set(bearer(ws.key)).send(body);
        expect(res.status).toBe(400);
        expect(res.body.message).toMatch(/body|extra/);
      }
      await t
        .http()
        .post(`/v1/posts/${post.id}/comments`)
        .set(bearer(ws.key))
        .send({ body: 'x'.repeat(2000) })
        .expect(201);
      expect(await commentCount(post.id)).toBe(1);
    });

    it("answers 404 for another workspace's post, on reading and on writing", async () => {
      const theirs = await newPost('Theirs', other.key, (await createWebhookAccount(t, other.key, 'http://127.0.0.1:9/other')).id);
      await t.http().post(`/v1/posts/${theirs.id}/comments`).set(bearer(ws.key)).send({ body: 'Peek' }).expect(404);
      await t.http().get(`/v1/posts/${theirs.id}/comments`).set(bearer(ws.key)).expect(404);
      expect(await commentCount(theirs.id)).toBe(0);
    });
  });

  it("keeps impossible comment and link rows out of the database itself (the migration's CHECKs)", async () => {
    const post = await newPost('Constraints');
    const link = await makeLink(post.id);
    const person = '00000000-0000-4000-8000-000000000001';
    const insert = (kind: string, authorId: string | null, linkId: string | null, name: string, verdict: string | null, body: string) =>
      db.query(
        `INSERT INTO post_comments (workspace_id, post_id, author_kind, author_id, share_link_id, author_name, verdict, body)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [ws.id, post.id, kind, authorId, linkId, name, verdict, body],
      );
    const refused: [string, Promise<unknown>][] = [
      ['a reviewer without a link', insert('reviewer', null, null, 'Eve', null, 'hi')],
      ['a reviewer with a person id', insert('reviewer', person, link.id, 'Eve', null, 'hi')],
      ['a person with a verdict', insert('person', person, null, 'Ada', 'approved', 'ok')],
      ['a person through a link', insert('person', person, link.id, 'Ada', null, 'ok')],
      ['an empty comment', insert('person', person, null, 'Ada', null, '')],
      ['an empty request for changes', insert('reviewer', null, link.id, 'Eve', 'changes_requested', '')],
      ['a reviewer name of 81 characters', insert('reviewer', null, link.id, 'x'.repeat(81), null, 'hi')],
      ['a comment of 2001 characters', insert('person', person, null, 'Ada', null, 'x'.repeat(2001))],
      ['an unknown verdict', insert('reviewer', null, link.id, 'Eve', 'maybe', 'hi')],
      [
        'a link valid for 31 days',
        db.query(
          `INSERT INTO share_links (workspace_id, token_hash, created_by_kind, created_by_id, created_by_label, created_at, expires_at)
           VALUES ($1, $2, 'key', $3, 'k', now(), now() + interval '31 days')`,
          [ws.id, createHash('sha256').update('x').digest(), person],
        ),
      ],
      [
        'a token hash that is not a SHA-256',
        db.query(
          `INSERT INTO share_links (workspace_id, token_hash, created_by_kind, created_by_id, created_by_label, created_at, expires_at)
           VALUES ($1, $2, 'key', $3, 'k', now(), now() + interval '1 day')`,
          [ws.id, Buffer.from('short'), person],
        ),
      ],
    ];
    const outcomes = await Promise.all(
      refused.map(async ([what, p]) => [
        what,
        await p.then(
          () => 'accepted',
          () => 'refused',
        ),
      ]),
    );
    expect(outcomes).toEqual(refused.map(([what]) => [what, 'refused']));
    // What the service writes is accepted: an approval without a word.
    await insert('reviewer', null, link.id, 'Eve', 'approved', '');
  });

  describe('making, listing and revoking links', () => {
    it('answers the token once (256 bits, in the URL), keeps only its SHA-256, and lists links without it', async () => {
      const post = await newPost('Link me');
      const link = await makeLink(post.id);
      expect(link.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(link.url).toBe(`http://herald.example.com/review/${link.token}`);
      expect(link.postIds).toEqual([post.id]);
      // 7 days by default.
      expect(new Date(link.expiresAt).getTime() - new Date(link.createdAt).getTime()).toBe(7 * 86_400_000);
      const row = (await db.query(`SELECT * FROM share_links WHERE id = $1`, [link.id])).rows[0];
      expect(row.token_hash).toEqual(createHash('sha256').update(link.token).digest());
      expect(JSON.stringify(row)).not.toContain(link.token);
      const list = await t.http().get(`/v1/share-links?postId=${post.id}`).set(bearer(ws.key)).expect(200);
      expect(list.body.data).toHaveLength(1);
      expect(list.body.data[0]).toMatchObject({ id: link.id, status: 'active', postIds: [post.id] });
      expect(JSON.stringify(list.body)).not.toContain(link.token);
      expect(list.body.data[0].token).toBeUndefined();
    });

    it('makes one link for a set of posts, in the order given', async () => {
      const [a, b, c] = [await newPost('Set A'), await newPost('Set B'), await newPost('Set C')];
      const link = await makeLink(a.id, { postIds: [c.id, b.id, a.id], expiresInDays: 30 });
      expect(link.postIds).toEqual([a.id, c.id, b.id]);
      expect(new Date(link.expiresAt).getTime() - new Date(link.createdAt).getTime()).toBe(30 * 86_400_000);
    });

    it('refuses bad input with a 400 naming the field, and makes nothing', async () => {
      const post = await newPost('Bad links');
      const theirs = await newPost('Not yours', other.key, (await createWebhookAccount(t, other.key, 'http://127.0.0.1:9/x')).id);
      const before = Number((await db.query(`SELECT count(*) AS n FROM share_links`)).rows[0].n);
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ expiresInDays: 0 }, /expiresInDays/],
        [{ expiresInDays: 31 }, /expiresInDays/],
        [{ expiresInDays: 1.5 }, /expiresInDays/],
        [{ postIds: ['not-a-uuid'] }, /postIds/],
        [{ postIds: [theirs.id] }, /postIds: unknown post/],
        [{ postIds: ['00000000-0000-4000-8000-000000000000'] }, /postIds: unknown post/],
        [{ postIds: Array.from({ length: 20 }, (_, i) => `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`) }, /postIds/],
        [{ token: 'mine' }, /token/],
      ];
      for (const [body, field] of cases) {
        const res = await t.http().post(`/v1/posts/${post.id}/share-links`).set(bearer(ws.key)).send(body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expect(res.body.message).toMatch(field);
      }
      await t.http().post(`/v1/posts/${theirs.id}/share-links`).set(bearer(ws.key)).send({}).expect(404);
      expect(Number((await db.query(`SELECT count(*) AS n FROM share_links`)).rows[0].n)).toBe(before);
    });

    it("revokes a link (twice is harmless), 404 for an unknown or another workspace's link", async () => {
      const post = await newPost('Revoke me');
      const link = await makeLink(post.id);
      const revoked = await t.http().delete(`/v1/share-links/${link.id}`).set(bearer(ws.key)).expect(200);
      expect(revoked.body).toMatchObject({ id: link.id, status: 'revoked' });
      const again = await t.http().delete(`/v1/share-links/${link.id}`).set(bearer(ws.key)).expect(200);
      expect(again.body.revokedAt).toBe(revoked.body.revokedAt);
      await t.http().delete(`/v1/share-links/${link.id}`).set(bearer(other.key)).expect(404);
      await t.http().delete(`/v1/share-links/00000000-0000-4000-8000-000000000000`).set(bearer(ws.key)).expect(404);
    });
  });

  describe('the review page, as a stranger and as an attacker', () => {
    it('shows the post read-only with its preview and a form, to a browser with no cookie at all', async () => {
      const post = await newPost('Our winter launch is here');
      const link = await makeLink(post.id);
      const s = stranger();
      const page = await s.get(`/review/${link.token}`).expect(200);
      expect(page.text).toContain('Our winter launch is here');
      expect(page.text).toContain('Blog');
      expect(page.text).toContain('name="name"');
      expect(page.headers['cache-control']).toBe('no-store');
      expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(page.headers['x-frame-options']).toBe('DENY');
      expect(page.headers['referrer-policy']).toBe('no-referrer');
      expect(setCookie(page, 'herald_form')).toMatch(/Path=\/review; HttpOnly; SameSite=Strict/);
    });

    it("shows nothing else of the workspace: no other post, no account's name, no webhook address, no way into /settings", async () => {
      const shown = await newPost('The one to review');
      await newPost('A secret roadmap post');
      const link = await makeLink(shown.id);
      const page = await stranger().get(`/review/${link.token}`).expect(200);
      expect(page.text).not.toContain('A secret roadmap post');
      // The account is named "Blog" in Herald by createWebhookAccount; the page says the platform ("Blog") only,
      // so check the webhook's address and the workspace's name instead.
      expect(page.text).not.toContain('127.0.0.1:9');
      expect(page.text).not.toContain('Agency');
      // (Its stylesheet and script are the page's own files, under /settings/assets: no link, no navigation.)
      expect(page.text).not.toMatch(/<a [^>]*href="\/settings/);
      expect([...page.text.matchAll(/href="([^"#]+)"/g)].map((m) => m[1]).filter((h) => !h.startsWith('/settings/assets/'))).toEqual([]);
      expect(page.text).not.toMatch(/action="\/settings/);
    });

    it('answers the same plain 404 for an unknown, a malformed, an expired and a revoked token', async () => {
      const post = await newPost('Gone links');
      const expired = await makeLink(post.id);
      await db.query(`UPDATE share_links SET created_at = now() - interval '8 days', expires_at = now() - interval '1 day' WHERE id = $1`, [
        expired.id,
      ]);
      const revoked = await makeLink(post.id);
      await t.http().delete(`/v1/share-links/${revoked.id}`).set(bearer(ws.key)).expect(200);
      const s = stranger();
      const answers = [];
      for (const token of ['A'.repeat(43), 'short', expired.token, revoked.token]) {
        const res = await s.get(`/review/${token}`);
        expect(res.status).toBe(404);
        expect(res.text).toContain('This review link is no longer valid');
        expect(res.text).not.toContain('Gone links');
        answers.push(res.text.replace(/<time[^>]*>[^<]*<\/time>/g, ''));
      }
      expect(new Set(answers).size).toBe(1);
      // Nor can a dead link be answered through.
      const form = await s.get(`/review/${(await makeLink(post.id)).token}`).expect(200);
      const res = await s
        .post(`/review/${revoked.token}`)
        .send({ _csrf: csrfOf(form.text), postId: post.id, name: 'Eve', action: 'approve' });
      expect(res.status).toBe(404);
      expect(await commentCount(post.id)).toBe(0);
    });

    it('keeps an answer as a comment with the name and verdict, the team sees it, and the page shows it back', async () => {
      const post = await newPost('Approve me');
      const link = await makeLink(post.id);
      const s = stranger();
      const form = await s.get(`/review/${link.token}`).expect(200);
      const sent = await s
        .post(`/review/${link.token}`)
        .send({ _csrf: csrfOf(form.text), postId: post.id, name: 'Clara Client', comment: 'Lovely', action: 'approve' });
      expect(sent.status).toBe(303);
      expect(sent.headers.location).toBe(`/review/${link.token}?answered=${post.id}&result=advice#post-${post.id}`);
      const comments = await t.http().get(`/v1/posts/${post.id}/comments`).set(bearer(ws.key)).expect(200);
      expect(comments.body.data).toEqual([
        expect.objectContaining({
          body: 'Lovely',
          verdict: 'approved',
          author: { kind: 'reviewer', id: null, name: 'Clara Client', shareLinkId: link.id },
        }),
      ]);
      const back = await s.get(sent.headers.location).expect(200);
      expect(back.text).toContain('Thank you: your answer was sent to the team.');
      expect(back.text).toContain('Clara Client');
      // The name is remembered for the next form.
      expect(back.text).toContain('value="Clara Client"');
    });

    it('needs a name and, to ask for changes, a comment: 400 with the reason, nothing kept', async () => {
      const post = await newPost('Needs words');
      const link = await makeLink(post.id);
      const s = stranger();
      const csrf = csrfOf((await s.get(`/review/${link.token}`)).text);
      const noName = await s.post(`/review/${link.token}`).send({ _csrf: csrf, postId: post.id, name: ' ', action: 'approve' });
      expect(noName.status).toBe(400);
      expect(noName.text).toContain('Your name is needed');
      const csrf2 = csrfOf(noName.text);
      const noComment = await s
        .post(`/review/${link.token}`)
        .send({ _csrf: csrf2, postId: post.id, name: 'Clara', comment: '', action: 'request_changes' });
      expect(noComment.status).toBe(400);
      expect(noComment.text).toContain('a comment is needed to ask for changes');
      const tooLong = await s
        .post(`/review/${link.token}`)
        .send({ _csrf: csrfOf(noComment.text), postId: post.id, name: 'x'.repeat(81), action: 'approve' });
      expect(tooLong.status).toBe(400);
      const badAction = await s
        .post(`/review/${link.token}`)
        .send({ _csrf: csrfOf(tooLong.text), postId: post.id, name: 'Clara', action: 'publish' });
      expect(badAction.status).toBe(400);
      expect(await commentCount(post.id)).toBe(0);
    });

    it("cannot act on post B with post A's token, even with B's id in the form", async () => {
      const a = await newPost('Post A');
      const b = await newPost('Post B');
      const link = await makeLink(a.id);
      const s = stranger();
      const csrf = csrfOf((await s.get(`/review/${link.token}`)).text);
      const res = await s
        .post(`/review/${link.token}`)
        .send({ _csrf: csrf, postId: b.id, name: 'Mallory', comment: 'Publish it', action: 'approve' });
      expect(res.status).toBe(404);
      expect(res.text).toContain('This review link is no longer valid');
      expect(await commentCount(b.id)).toBe(0);
      expect(await commentCount(a.id)).toBe(0);
    });

    it("refuses a form without the page's own form cookie (a cross-site post) and one the browser says came from elsewhere", async () => {
      const post = await newPost('Forged');
      const link = await makeLink(post.id);
      const s = stranger();
      const csrf = csrfOf((await s.get(`/review/${link.token}`)).text);
      // Another browser (no cookie) replaying the token of the page.
      const forged = await stranger().post(`/review/${link.token}`).send({ _csrf: csrf, postId: post.id, name: 'Eve', action: 'approve' });
      expect(forged.status).toBe(403);
      const wrong = await s.post(`/review/${link.token}`).send({ _csrf: 'x'.repeat(43), postId: post.id, name: 'Eve', action: 'approve' });
      expect(wrong.status).toBe(403);
      const crossSite = await s
        .post(`/review/${link.token}`)
        .set('Sec-Fetch-Site', 'cross-site')
        .send({ _csrf: csrf, postId: post.id, name: 'Eve', action: 'approve' });
      expect(crossSite.status).toBe(403);
      expect(await commentCount(post.id)).toBe(0);
    });

    it('shows a link for a set of posts each with its own form, and an answer lands on its own post', async () => {
      const [a, b] = [await newPost('First of two'), await newPost('Second of two')];
      const link = await makeLink(a.id, { postIds: [b.id] });
      const s = stranger();
      const page = await s.get(`/review/${link.token}`).expect(200);
      expect(page.text.indexOf('First of two')).toBeLessThan(page.text.indexOf('Second of two'));
      expect(page.text.match(/data-testid="review-form"/g)).toHaveLength(2);
      await s
        .post(`/review/${link.token}`)
        .send({ _csrf: csrfOf(page.text), postId: b.id, name: 'Clara', comment: 'Too long', action: 'request_changes' })
        .expect(303);
      expect([await commentCount(a.id), await commentCount(b.id)]).toEqual([0, 1]);
    });

    describe("a reviewer's decision, by the workspace's approval settings", () => {
      let team: Workspace;
      let editorKey: string;
      let teamAccount: string;
      const setApprovals = (clientApproval: boolean) =>
        t.http().put('/v1/settings/approvals').set(bearer(team.key)).send({ mode: 'editors', clientApproval }).expect(200);
      /** An editor's post, which waits for an owner's approval (mode editors). */
      const waitingPost = async (text: string) => {
        const post = await createPost(t, editorKey, { text, scheduledAt: later(), targets: [{ accountId: teamAccount }] });
        expect((await t.http().get(`/v1/posts/${post.id}`).set(bearer(team.key))).body.status).toBe('pending_approval');
        const link = await t.http().post(`/v1/posts/${post.id}/share-links`).set(bearer(editorKey)).send({}).expect(201);
        return { post, token: link.body.token as string, linkId: link.body.id as string };
      };
      const answer = async (token: string, postId: string, action: string, comment = '') => {
        const s = stranger();
        const csrf = csrfOf((await s.get(`/review/${token}`).expect(200)).text);
        const res = await s.post(`/review/${token}`).send({ _csrf: csrf, postId, name: 'Rita Client', comment, action });
        expect(res.status).toBe(303);
        return { location: String(res.headers.location), page: await s.get(String(res.headers.location)).expect(200) };
      };
      const statusOf = async (postId: string) => (await t.http().get(`/v1/posts/${postId}`).set(bearer(team.key)).expect(200)).body;

      beforeAll(async () => {
        team = await newWorkspace(t, 'Approving team');
        editorKey = (await t.http().post('/v1/api-keys').set(bearer(team.key)).send({ name: 'editor', role: 'editor' }).expect(201)).body
          .key;
        teamAccount = (await createWebhookAccount(t, team.key, 'http://127.0.0.1:9/team')).id;
      });

      it('with client approval on, approves a post waiting for approval: it is scheduled with its jobs, and the page says so', async () => {
        await setApprovals(true);
        const { post, token, linkId } = await waitingPost('Client says yes');
        const { location, page } = await answer(token, post.id, 'approve');
        expect(location).toContain('result=approved');
        expect(page.text).toContain('you approved the post');
        const after = await statusOf(post.id);
        expect(after.status).toBe('scheduled');
        expect(after.jobs).toHaveLength(1);
        const comments = (await t.http().get(`/v1/posts/${post.id}/comments`).set(bearer(team.key)).expect(200)).body.data;
        expect(comments).toEqual([
          expect.objectContaining({ verdict: 'approved', author: expect.objectContaining({ name: 'Rita Client', shareLinkId: linkId }) }),
        ]);
        const history = (await t.http().get(`/v1/posts/${post.id}/approvals`).set(bearer(team.key)).expect(200)).body;
        expect(JSON.stringify(history)).toContain('Rita Client');
      });

      it('with client approval on, asking for changes sends the post back to draft with the comment', async () => {
        await setApprovals(true);
        const { post, token } = await waitingPost('Client says no');
        const { location } = await answer(token, post.id, 'request_changes', 'Use the new logo, please');
        expect(location).toContain('result=rejected');
        const after = await statusOf(post.id);
        expect(after.status).toBe('draft');
        expect(after.jobs).toEqual([]);
        const comments = (await t.http().get(`/v1/posts/${post.id}/comments`).set(bearer(team.key)).expect(200)).body.data;
        expect(comments[0]).toMatchObject({ verdict: 'changes_requested', body: 'Use the new logo, please' });
      });

      it('with client approval off, an approval is advice for the team: the post still waits, the verdict is a comment', async () => {
        await setApprovals(false);
        const { post, token } = await waitingPost('Client has an opinion');
        const { location, page } = await answer(token, post.id, 'approve');
        expect(location).toContain('result=advice');
        expect(page.text).toContain('who make the final decision');
        expect((await statusOf(post.id)).status).toBe('pending_approval');
        expect((await t.http().get(`/v1/posts/${post.id}/comments`).set(bearer(team.key)).expect(200)).body.data[0].verdict).toBe(
          'approved',
        );
      });
    });

    it('answers 429 with Retry-After once a client sends more than 60 requests a minute, and other clients are not affected', async () => {
      const post = await newPost('Flood');
      const link = await makeLink(post.id);
      const s = stranger();
      const statuses: number[] = [];
      for (let i = 0; i < 61; i++) statuses.push((await s.get(`/review/${'B'.repeat(43)}`)).status);
      expect(statuses.slice(0, 60).every((st) => st === 404)).toBe(true);
      const limited = await s.get(`/review/${link.token}`);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(limited.text).not.toContain('Flood');
      await stranger().get(`/review/${link.token}`).expect(200);
    });
  });
});
