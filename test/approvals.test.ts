import type { AuthContext } from '../src/access/auth-context';
import { ApprovalsService } from '../src/approvals/approvals.service';
import { DomainError, httpStatusFor } from '../src/common/errors';
import { APPROVAL_MAILS_PER_WORKSPACE_PER_DAY } from '../src/notifications/mail-limits';
import { PeopleService } from '../src/people/people.service';
import { PostsService } from '../src/posts/posts.service';
import { bootTestApp, TestApp } from './support/app';
import { bearer } from './support/config';
import { withClient } from './support/database';
import { createWebhookAccount } from './support/engine';
import { drainMail, mailConfig, mailedLinkTo, MailCatcher, ReceivedMail, startMailCatcher } from './support/mail';
import { acceptInvitation, createFirstPerson } from './support/people';

/**
 * Approvals end to end (docs/api.md "Approvals"): the setting, posts that wait instead of being
 * scheduled, the decisions and who may take them, approval after the time and after the deadline,
 * two approvals at once, client reviewers, the history, the audit trail, and the mails (a real
 * SMTP server on loopback) with their daily limit. The worker is off: jobs stay as written.
 */
const FUTURE = '2030-01-01T09:00:00.000Z';

describe('approvals', () => {
  let smtp: MailCatcher;
  let t: TestApp;
  let owner: string;
  let owner2: string;
  let editor: string;
  let account: string;
  let ws: string;
  /** People (with addresses): two owners and an editor. */
  let olga: AuthContext;
  let eddie: AuthContext;

  const q = <T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> =>
    withClient(t.databaseUrl, async (db) => (await db.query(text, params)).rows as T[]);
  const setMode = (mode: string, clientApproval = false) =>
    t.http().put('/v1/settings/approvals').set(bearer(owner)).send({ mode, clientApproval }).expect(200);
  const newPost = (key: string, body: Record<string, unknown> = {}) =>
    t
      .http()
      .post('/v1/posts')
      .set(bearer(key))
      .send({ text: 'Launch day!', targets: [{ accountId: account }], scheduledAt: FUTURE, ...body });
  const statusOf = async (p: Promise<unknown>): Promise<number> => {
    try {
      await p;
      return 200;
    } catch (err) {
      if (err instanceof DomainError) return httpStatusFor(err.code);
      throw err;
    }
  };
  /** A person's post, as the page makes it (PostsService with the person's context). */
  const personPost = async (auth: AuthContext, text: string) =>
    (await t.app.get(PostsService).create(auth, { text, targets: [{ accountId: account }], scheduledAt: FUTURE }, {})).body as {
      id: string;
      status: string;
    };
  const mailsTo = (to: string, subject: RegExp, about = ''): ReceivedMail[] =>
    smtp.received.filter((m) => m.to.includes(to) && subject.test(m.parsed.subject ?? '') && (m.parsed.text ?? '').includes(about));

  async function invite(email: string, role: 'owner' | 'editor', name: string): Promise<AuthContext> {
    const res = await t.http().post('/v1/invitations').set(bearer(owner)).send({ email, role });
    expect(res.status).toBe(201);
    await drainMail(t);
    await acceptInvitation(t, await mailedLinkTo(smtp, email), name);
    const [{ id }] = await q<{ id: string }>(`SELECT id FROM people WHERE email = $1`, [email]);
    return (await t.app.get(PeopleService).activePerson(id))!;
  }

  beforeAll(async () => {
    smtp = await startMailCatcher();
    t = await bootTestApp({ config: mailConfig(smtp.url, { allowPrivateUrls: true, publicUrl: 'http://herald.test' }) });
    owner = t.adminKey;
    const keys = await Promise.all(
      (['owner', 'editor'] as const).map(
        async (role) => (await t.http().post('/v1/api-keys').set(bearer(owner)).send({ name: role, role })).body.key as string,
      ),
    );
    [owner2, editor] = keys;
    account = (await createWebhookAccount(t, owner, 'http://127.0.0.1:9/hook')).id;
    const olgaId = await createFirstPerson(t, owner, 'olga@example.com', 'Olga Owner');
    olga = (await t.app.get(PeopleService).activePerson(olgaId))!;
    ws = olga.workspaceId;
    await invite('oscar@example.com', 'owner', 'Oscar Owner');
    eddie = await invite('eddie@example.com', 'editor', 'Eddie Editor');
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  describe('the setting', () => {
    it('is off by default, changed by owners only, checked field by field, and audited', async () => {
      expect((await t.http().get('/v1/settings/approvals').set(bearer(editor)).expect(200)).body).toEqual({
        mode: 'off',
        clientApproval: false,
      });
      expect(
        (await t.http().put('/v1/settings/approvals').set(bearer(editor)).send({ mode: 'everyone', clientApproval: false })).status,
      ).toBe(403);
      const bad = await t.http().put('/v1/settings/approvals').set(bearer(owner)).send({ mode: 'sometimes', clientApproval: false });
      expect(bad.status).toBe(400);
      expect(bad.body.message).toMatch(/mode must be one of: off, editors, everyone/);
      const missing = await t.http().put('/v1/settings/approvals').set(bearer(owner)).send({ mode: 'editors' });
      expect(missing.status).toBe(400);
      expect(missing.body.message).toMatch(/clientApproval/);
      expect((await t.http().get('/v1/settings/approvals').set(bearer(owner))).body).toEqual({ mode: 'off', clientApproval: false });

      await setMode('editors', true);
      expect((await t.http().get('/v1/settings/approvals').set(bearer(owner))).body).toEqual({ mode: 'editors', clientApproval: true });
      const [entry] = await q(`SELECT action, before, after FROM audit_events WHERE action = 'approvals' ORDER BY at DESC LIMIT 1`);
      expect(entry).toEqual({
        action: 'approvals',
        before: { mode: 'off', clientApproval: false },
        after: { mode: 'editors', clientApproval: true },
      });
      await setMode('editors');
    });
  });

  describe('mode editors', () => {
    beforeAll(() => setMode('editors'));

    it("makes an editor's new post wait (201 pending_approval, no jobs) and lets an owner's through", async () => {
      const pending = await newPost(editor).expect(201);
      expect(pending.body).toMatchObject({
        status: 'pending_approval',
        jobs: [],
        scheduledAt: FUTURE,
        draftTargets: [{ accountId: account }],
      });
      expect(await q(`SELECT count(*)::int AS n FROM jobs WHERE post_id = $1`, [pending.body.id])).toEqual([{ n: 0 }]);
      const listed = await t.http().get('/v1/posts?status=pending_approval').set(bearer(owner)).expect(200);
      expect(listed.body.data.map((p: { id: string }) => p.id)).toContain(pending.body.id);

      const scheduled = await newPost(owner).expect(201);
      expect(scheduled.body.status).toBe('scheduled');
      expect(scheduled.body.jobs).toHaveLength(1);
    });

    it('lets an owner approve (the jobs written), not an editor, and keeps the history', async () => {
      const { body: post } = await newPost(editor).expect(201);
      const refused = await t.http().post(`/v1/posts/${post.id}/approve`).set(bearer(editor));
      expect(refused.status).toBe(403);
      const approved = await t.http().post(`/v1/posts/${post.id}/approve`).set(bearer(owner)).expect(200);
      expect(approved.body).toMatchObject({ status: 'scheduled', scheduledAt: FUTURE, draftTargets: null });
      expect(approved.body.jobs.map((j: { status: string; accountId: string }) => [j.status, j.accountId])).toEqual([
        ['scheduled', account],
      ]);
      const history = await t.http().get(`/v1/posts/${post.id}/approvals`).set(bearer(editor)).expect(200);
      expect(history.body.data.map((s: { step: string; by: { kind: string } }) => [s.step, s.by.kind])).toEqual([
        ['submitted', 'key'],
        ['approved', 'key'],
      ]);
      const audit = await q<{ action: string }>(`SELECT action FROM audit_events WHERE subject_id = $1 ORDER BY at, id`, [post.id]);
      expect(audit.map((a) => a.action)).toEqual(['create', 'submit', 'approve']);
      expect((await t.http().post(`/v1/posts/${post.id}/approve`).set(bearer(owner))).status).toBe(409);
    });

    it('writes the jobs once when two owners approve at the same moment', async () => {
      const { body: post } = await newPost(editor).expect(201);
      const answers = await Promise.all([owner, owner2].map((k) => t.http().post(`/v1/posts/${post.id}/approve`).set(bearer(k))));
      expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
      expect(answers.find((a) => a.status === 409)!.body.message).toMatch(/already scheduled/);
      expect(await q(`SELECT count(*)::int AS n FROM jobs WHERE post_id = $1`, [post.id])).toEqual([{ n: 1 }]);
      expect(await q(`SELECT count(*)::int AS n FROM approval_steps WHERE post_id = $1 AND step = 'approved'`, [post.id])).toEqual([
        { n: 1 },
      ]);
    });

    it('sends a rejected post back as a draft with its comment, which is required', async () => {
      const { body: post } = await newPost(editor).expect(201);
      for (const body of [{}, { comment: '' }, { comment: 'x'.repeat(2001) }]) {
        const res = await t.http().post(`/v1/posts/${post.id}/reject`).set(bearer(owner)).send(body);
        expect(res.status).toBe(400);
        expect(res.body.message).toMatch(/comment/);
      }
      const blank = await t.http().post(`/v1/posts/${post.id}/reject`).set(bearer(owner)).send({ comment: '   ' });
      expect(blank.status).toBe(400);
      expect((await t.http().get(`/v1/posts/${post.id}`).set(bearer(owner))).body.status).toBe('pending_approval');

      const rejected = await t
        .http()
        .post(`/v1/posts/${post.id}/reject`)
        .set(bearer(owner))
        .send({ comment: 'Wrong date: launch is Thursday.' })
        .expect(200);
      expect(rejected.body).toMatchObject({ status: 'draft', scheduledAt: null, publishBy: null, jobs: [] });
      const history = await t.http().get(`/v1/posts/${post.id}/approvals`).set(bearer(owner)).expect(200);
      expect(history.body.data.at(-1)).toMatchObject({ step: 'rejected', comment: 'Wrong date: launch is Thursday.' });
      // The author fixes it and submits the draft again.
      const again = await t.http().post(`/v1/posts/${post.id}/submit`).set(bearer(editor)).expect(200);
      expect(again.body.status).toBe('pending_approval');
    });

    it("answers 409 to an owner's submit (approval is not required of them)", async () => {
      const { body: draft } = await newPost(owner, { status: 'draft', scheduledAt: undefined }).expect(201);
      const res = await t.http().post(`/v1/posts/${draft.id}/submit`).set(bearer(owner));
      expect(res.status).toBe(409);
      expect(res.body.message).toMatch(/approval is not required/);
    });

    it("needs approval again after an editor's edit of an approved post: its jobs go in the same transaction", async () => {
      const { body: post } = await newPost(editor).expect(201);
      await t.http().post(`/v1/posts/${post.id}/approve`).set(bearer(owner)).expect(200);
      const edited = await t.http().patch(`/v1/posts/${post.id}`).set(bearer(editor)).send({ text: 'Launch day, take two' }).expect(200);
      expect(edited.body).toMatchObject({
        status: 'pending_approval',
        jobs: [],
        text: 'Launch day, take two',
        draftTargets: [{ accountId: account }],
      });
      expect(await q(`SELECT count(*)::int AS n FROM job_payloads WHERE post_id = $1`, [post.id])).toEqual([{ n: 0 }]);
      const steps = await q<{ step: string }>(`SELECT step FROM approval_steps WHERE post_id = $1 ORDER BY created_at`, [post.id]);
      expect(steps.map((s) => s.step)).toEqual(['submitted', 'approved', 'resubmitted']);
      expect(
        await q(`SELECT count(*)::int AS n FROM audit_events WHERE subject_id = $1 AND action = 'approval_needed_again'`, [post.id]),
      ).toEqual([{ n: 1 }]);
      // An owner's edit of an approved post does not need approval (mode editors).
      await t.http().post(`/v1/posts/${post.id}/approve`).set(bearer(owner)).expect(200);
      const byOwner = await t.http().patch(`/v1/posts/${post.id}`).set(bearer(owner)).send({ text: 'Launch day, final' }).expect(200);
      expect(byOwner.body.status).toBe('scheduled');
    });

    it('publishes at once when approved after its time, and expires when approved after its deadline', async () => {
      const { body: late } = await newPost(editor).expect(201);
      await q(`UPDATE posts SET scheduled_at = now() - interval '1 hour' WHERE id = $1`, [late.id]);
      const before = Date.now();
      const approved = await t.http().post(`/v1/posts/${late.id}/approve`).set(bearer(owner)).expect(200);
      expect(approved.body.status).toBe('scheduled');
      expect(Date.parse(approved.body.scheduledAt)).toBeGreaterThanOrEqual(before - 1000);
      const [job] = await q<{ due: boolean }>(`SELECT run_at <= now() AS due FROM jobs WHERE post_id = $1`, [late.id]);
      expect(job.due).toBe(true);

      const { body: stale } = await newPost(editor, { publishBy: '2030-01-01T10:00:00Z' }).expect(201);
      await q(`UPDATE posts SET scheduled_at = now() - interval '2 hours', publish_by = now() - interval '1 hour' WHERE id = $1`, [
        stale.id,
      ]);
      const expired = await t.http().post(`/v1/posts/${stale.id}/approve`).set(bearer(owner)).expect(200);
      expect(expired.body).toMatchObject({ status: 'expired', jobs: [] });
      expect(await q(`SELECT action FROM audit_events WHERE subject_id = $1 AND action = 'expire'`, [stale.id])).toHaveLength(1);
      expect((await t.http().get(`/v1/posts?status=expired`).set(bearer(owner))).body.data.map((p: { id: string }) => p.id)).toEqual([
        stale.id,
      ]);
    });
  });

  describe('mode everyone', () => {
    beforeAll(() => setMode('everyone'));
    afterAll(() => setMode('editors'));

    it("needs an owner other than the author: the author's approval is a 403 that says why", async () => {
      const { body: post } = await newPost(owner).expect(201);
      expect(post.status).toBe('pending_approval');
      const own = await t.http().post(`/v1/posts/${post.id}/approve`).set(bearer(owner));
      expect(own.status).toBe(403);
      expect(own.body.message).toMatch(/an owner other than its author/);
      await t.http().post(`/v1/posts/${post.id}/approve`).set(bearer(owner2)).expect(200);
    });
  });

  describe('client reviewers', () => {
    it('count only when client approval is on', async () => {
      const approvals = t.app.get(ApprovalsService);
      const reviewer = { kind: 'reviewer' as const, name: 'Rita Client', shareLinkId: '00000000-0000-4000-8000-000000000001' };
      const { body: post } = await newPost(editor).expect(201);
      const off = approvals.approve(ws, post.id, reviewer);
      await expect(off).rejects.toThrow(/client approval is off/);
      expect(await statusOf(off)).toBe(403);

      await setMode('editors', true);
      const done = await approvals.approve(ws, post.id, reviewer);
      expect(done.status).toBe('scheduled');
      const history = await approvals.history(ws, post.id);
      expect(history.at(-1)).toMatchObject({ step: 'approved', by: { kind: 'reviewer', id: reviewer.shareLinkId, label: 'Rita Client' } });
      const [audit] = await q(`SELECT actor_kind, actor_label FROM audit_events WHERE subject_id = $1 AND action = 'approve'`, [post.id]);
      expect(audit).toEqual({ actor_kind: 'system', actor_label: `reviewer “Rita Client” (client review link ${reviewer.shareLinkId})` });
      await setMode('editors');
    });
  });

  describe('mail', () => {
    beforeAll(() => setMode('editors'));

    it('tells the owners when a post waits, and its author of the decision, with the comment', async () => {
      const waiting = await personPost(eddie, 'Eddie’s spring post');
      expect(waiting.status).toBe('pending_approval');
      await drainMail(t);
      for (const to of ['olga@example.com', 'oscar@example.com']) {
        const [mail] = mailsTo(to, /waits for your approval/, 'Eddie’s spring post');
        expect(mail.parsed.text).toContain('Eddie Editor <eddie@example.com> asks for approval of a post');
        expect(mail.parsed.text).toContain('Eddie’s spring post');
        expect(mail.parsed.text).toContain('http://herald.test/settings/approvals');
      }
      expect(mailsTo('eddie@example.com', /waits for your approval/, 'Eddie’s spring post')).toEqual([]);

      await t.app.get(ApprovalsService).reject(ws, waiting.id, olga, 'Add the link to the shop, please.');
      await drainMail(t);
      const [sentBack] = mailsTo('eddie@example.com', /sent back/);
      expect(sentBack.parsed.text).toContain('Olga Owner <olga@example.com> sent your post back to you as a draft.');
      expect(sentBack.parsed.text).toContain('Comment: Add the link to the shop, please.');

      await t.app.get(ApprovalsService).submit(eddie, waiting.id);
      await t.app.get(ApprovalsService).approve(ws, waiting.id, olga);
      await drainMail(t);
      expect(mailsTo('eddie@example.com', /was approved/)).toHaveLength(1);
    });

    it('counts against the daily limit: beyond it the step is recorded without a mail', async () => {
      const [{ n }] = await q<{ n: number }>(`SELECT count(*)::int AS n FROM mail_outbox WHERE kind = 'approval'`);
      await q(
        `INSERT INTO mail_outbox (id, workspace_id, kind, recipients, subject, html, text, status, sent_at)
         SELECT gen_random_uuid(), $1, 'approval', ARRAY['olga@example.com'], 'old', 'old', 'old', 'sent', now() FROM generate_series(1, $2::int)`,
        [ws, APPROVAL_MAILS_PER_WORKSPACE_PER_DAY - n],
      );
      const post = await personPost(eddie, 'One more post');
      expect(await q(`SELECT step FROM approval_steps WHERE post_id = $1`, [post.id])).toEqual([{ step: 'submitted' }]);
      expect(await q<{ n: number }>(`SELECT count(*)::int AS n FROM mail_outbox WHERE kind = 'approval'`)).toEqual([
        { n: APPROVAL_MAILS_PER_WORKSPACE_PER_DAY },
      ]);
    });
  });
});
