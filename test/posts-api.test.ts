import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { canonicalHash } from '../src/common/canonical-json';
import { bootTestApp, TestApp } from './support/app';
import { withClient } from './support/database';
import { createPost, createWebhookAccount } from './support/engine';
import { bearer } from './support/config';

/**
 * POST/GET/PATCH/DELETE /v1/posts against a real app and database (docs/api.md). The worker
 * is off: nothing here is delivered, so every job state seen is the API's own doing or set by SQL.
 */

const JOB_KEYS = [
  'id',
  'postId',
  'accountId',
  'provider',
  'status',
  'attemptCount',
  'nextAttemptAt',
  'idempotencyKey',
  'errorClass',
  'lastError',
  'deadReason',
  'remoteId',
  'remoteUrl',
];
const POST_KEYS = ['id', 'status', 'text', 'title', 'link', 'media', 'scheduledAt', 'publishBy', 'metadata', 'draftTargets', 'jobs'];

const FUTURE = '2030-01-01T09:00:00Z';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Counts {
  posts: number;
  jobs: number;
  keys: number;
}

describe('posts API', () => {
  let t: TestApp;
  let adminWs: string;
  /** Two active webhook accounts of the bootstrap workspace. */
  let a: string;
  let b: string;
  let c: string;
  /** A webhook account of another workspace, and that workspace's key. */
  let otherKey: string;
  let otherAccount: string;

  const q = <T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> =>
    withClient(t.databaseUrl, async (db: Client) => (await db.query(text, params)).rows as T[]);

  const counts = async (): Promise<Counts> => {
    const [row] = await q<Counts>(
      `SELECT (SELECT count(*)::int FROM posts) AS posts, (SELECT count(*)::int FROM jobs) AS jobs,
              (SELECT count(*)::int FROM idempotency_keys) AS keys`,
    );
    return row;
  };

  const post = (key = t.adminKey) => t.http().post('/v1/posts').set(bearer(key));

  async function newWorkspace(name: string): Promise<{ id: string; key: string }> {
    const res = await t.http().post('/v1/workspaces').set(bearer(t.adminKey)).send({ name }).expect(201);
    return { id: res.body.workspace.id, key: res.body.apiKey.key };
  }

  /**
   * Sends `body` (an object, or a raw string sent as JSON), expects `status` with the error shape and
   * a message matching `message`, and checks that no post, job or idempotency key was written.
   */
  async function rejects(body: unknown, status: number, message: RegExp | string, headers: Record<string, string> = {}): Promise<string> {
    const before = await counts();
    let req = post().set(headers);
    if (typeof body === 'string') req = req.set('Content-Type', 'application/json');
    const res = await req.send(body as object);
    expect({ status: res.status, body: res.body }).toEqual({
      status,
      body: { statusCode: status, error: expect.any(String), message: expect.any(String) },
    });
    if (typeof message === 'string') expect(res.body.message).toBe(message);
    else expect(res.body.message).toMatch(message);
    expect(await counts()).toEqual(before);
    return res.body.message as string;
  }

  beforeAll(async () => {
    t = await bootTestApp({ config: { allowPrivateUrls: true } });
    a = (await createWebhookAccount(t, t.adminKey, 'http://127.0.0.1:9/a')).id;
    b = (await createWebhookAccount(t, t.adminKey, 'http://127.0.0.1:9/b')).id;
    c = (await createWebhookAccount(t, t.adminKey, 'http://127.0.0.1:9/c')).id;
    adminWs = (await q<{ w: string }>('SELECT workspace_id AS w FROM accounts WHERE id = $1', [a]))[0].w;
    const other = await newWorkspace('Other tenant');
    otherKey = other.key;
    otherAccount = (await createWebhookAccount(t, otherKey, 'http://127.0.0.1:9/other')).id;
  });
  afterAll(async () => {
    await t.close();
  });

  describe('intake validation: 400 naming the problem, nothing written', () => {
    const ok = () => ({ text: 'Hello', targets: [{ accountId: a }], scheduledAt: FUTURE });

    it('malformed JSON, without echoing the body', async () => {
      await rejects('{"text": "Hello", "targets": [', 400, 'The request body is not valid JSON');
      // V8's own JSON.parse message quotes the text around the error: it must not reach the answer.
      const message = await rejects('{"text": "x", "metadata": {"token": hunter2-very-secret}}', 400, 'The request body is not valid JSON');
      expect(message).not.toContain('hunter2');
    });

    it('wrong types name the field', async () => {
      await rejects({ ...ok(), text: 5 }, 400, /^text must be a string/);
      await rejects({ ...ok(), targets: 'x' }, 400, /^targets must be an array/);
      await rejects({ ...ok(), targets: [{ accountId: 12 }] }, 400, /^targets\.0\.accountId must be a string/);
      await rejects({ ...ok(), targets: [{ accountId: 'not-a-uuid' }] }, 400, /^targets\.0\.accountId must be a UUID/);
      await rejects({ ...ok(), title: ['x'] }, 400, /^title must be a string/);
    });

    it('unknown fields, at the top level and inside a target', async () => {
      await rejects({ ...ok(), priority: 'high' }, 400, 'priority is not allowed (unknown field)');
      await rejects({ ...ok(), targets: [{ accountId: a, colour: 'red' }] }, 400, 'targets.0.colour is not allowed (unknown field)');
    });

    it('a body over 1 MB is 413', async () => {
      await rejects({ ...ok(), text: 'x'.repeat(1_100_000) }, 413, /1 MB/);
    });

    it('0 targets, 21 targets, and the same account twice', async () => {
      await rejects({ ...ok(), targets: [] }, 400, /^targets must contain at least 1 element/);
      const many = Array.from({ length: 21 }, () => ({ accountId: randomUUID() }));
      await rejects({ ...ok(), targets: many }, 400, /^targets must contain no more than 20 elements/);
      const twice = await rejects(
        { ...ok(), targets: [{ accountId: a }, { accountId: b }, { accountId: a.toUpperCase() }] },
        400,
        /listed twice/,
      );
      expect(twice).toMatch(/^targets\.2\.accountId/);
    });

    // How long the refusal takes is the benchmarks' business, not a test's (a loaded machine made a
    // wall-clock bound here fail): the user-visible promise is one short message, not 10,000.
    it('10,000 targets: one short message about the 20-target limit', async () => {
      const targets = Array.from({ length: 10_000 }, () => ({ accountId: randomUUID(), extra: 1 }));
      const message = await rejects({ ...ok(), targets }, 400, /20/);
      expect(message).toBe('targets must contain no more than 20 elements');
    });

    it('an unknown account, and another workspace\'s account, answer the same "unknown account"', async () => {
      const unknown = randomUUID();
      const m1 = await rejects({ ...ok(), targets: [{ accountId: a }, { accountId: unknown }] }, 400, /unknown account/);
      expect(m1).toBe(`targets.1.accountId: unknown account ${unknown}`);
      const m2 = await rejects({ ...ok(), targets: [{ accountId: a }, { accountId: otherAccount }] }, 400, /unknown account/);
      expect(m2).toBe(`targets.1.accountId: unknown account ${otherAccount}`);
      // The same account is fine for its own workspace.
      await createPost(t, otherKey, { ...ok(), targets: [{ accountId: otherAccount }] });
    });

    it('scheduledAt without an offset, and impossible dates', async () => {
      await rejects(
        { ...ok(), scheduledAt: '2026-12-01T09:00:00' },
        400,
        /^scheduledAt must be an ISO 8601 date-time with a time zone offset/,
      );
      await rejects({ ...ok(), scheduledAt: '2026-02-30T10:00:00Z' }, 400, 'scheduledAt is not a real date-time: 2026-02-30T10:00:00Z');
      await rejects({ ...ok(), scheduledAt: '2026-12-01T25:00:00Z' }, 400, /^scheduledAt is not a real date-time/);
      await rejects({ ...ok(), scheduledAt: 1_780_000_000_000 }, 400, /^scheduledAt must be a string/);
    });

    it('publishBy before scheduledAt, and publishBy in the past', async () => {
      await rejects(
        { ...ok(), scheduledAt: '2030-01-02T00:00:00Z', publishBy: '2030-01-01T00:00:00Z' },
        400,
        /^publishBy \(2030-01-01T00:00:00\.000Z\) must be after scheduledAt \(2030-01-02T00:00:00\.000Z\)/,
      );
      await rejects({ ...ok(), scheduledAt: '2030-01-01T00:00:00Z', publishBy: '2030-01-01T00:00:00Z' }, 400, /must be after scheduledAt/);
      await rejects(
        { ...ok(), scheduledAt: '2020-01-01T00:00:00Z', publishBy: '2020-01-02T00:00:00Z' },
        400,
        'publishBy (2020-01-02T00:00:00.000Z) is in the past',
      );
      // Without scheduledAt (now), a past publishBy is refused too.
      const { scheduledAt: _, ...now } = ok();
      await rejects({ ...now, publishBy: '2021-01-01T00:00:00Z' }, 400, /^publishBy/);
    });

    it('links must be absolute http(s) URLs', async () => {
      for (const link of ['javascript:alert(1)', 'ftp://example.com/file', '/blog/post', 'example.com/post']) {
        await rejects({ ...ok(), link }, 400, 'link must be an absolute http(s) URL');
      }
    });

    it('text over 10,000 characters (10,000 exactly is fine)', async () => {
      await rejects({ ...ok(), text: 'x'.repeat(10_001) }, 400, /^text must be shorter than or equal to 10000 characters/);
      await rejects({ ...ok(), text: '' }, 400, /^text should not be empty/);
      const res = await post()
        .send({ ...ok(), text: 'x'.repeat(10_000) })
        .expect(201);
      expect(res.body.text).toHaveLength(10_000);
    });

    it('metadata over 16 KB, and metadata that is not an object', async () => {
      // {"k":"…"} is 8 bytes plus the string: 16,376 characters make exactly 16 KB.
      await rejects({ ...ok(), metadata: { k: 'x'.repeat(16_377) } }, 400, 'metadata must be at most 16 KB as JSON');
      await rejects({ ...ok(), metadata: ['a', 'b'] }, 400, /^metadata must be an object/);
      await rejects({ ...ok(), metadata: 'text' }, 400, /^metadata must be an object/);
      const res = await post()
        .send({ ...ok(), metadata: { k: 'x'.repeat(16_376) } })
        .expect(201);
      expect((res.body.metadata as { k: string }).k).toHaveLength(16_376);
    });

    it('unknown media ids', async () => {
      const id = randomUUID();
      await rejects({ ...ok(), media: [id] }, 400, `media: unknown media id ${id}`);
      await rejects({ ...ok(), media: ['not-a-uuid'] }, 400, /^media must contain media ids/);
    });
  });

  describe('a valid post', () => {
    it('answers 201 with the post and one job per target, committed before the answer', async () => {
      const body = {
        text: 'Launch day',
        title: 'Herald 1.0',
        link: 'https://example.com/blog/herald-1-0',
        targets: [{ accountId: a }, { accountId: b, text: 'Launch day, B edition' }],
        scheduledAt: '2030-05-01T10:00:00+02:00',
        publishBy: '2030-05-02T08:00:00Z',
        metadata: { campaign: 'launch', tags: ['a', 'b'], nested: { n: 1 } },
      };
      const res = await post().send(body).expect(201);
      const p = res.body;
      for (const key of POST_KEYS) expect(p).toHaveProperty(key);
      expect(p).toMatchObject({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        status: 'scheduled',
        text: 'Launch day',
        title: 'Herald 1.0',
        link: 'https://example.com/blog/herald-1-0',
        media: [],
        scheduledAt: '2030-05-01T08:00:00.000Z',
        publishBy: '2030-05-02T08:00:00.000Z',
        metadata: { campaign: 'launch', tags: ['a', 'b'], nested: { n: 1 } },
      });
      expect(p.jobs).toHaveLength(2);
      for (const job of p.jobs) {
        for (const key of JOB_KEYS) expect(job).toHaveProperty(key);
        expect(job).toMatchObject({
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          postId: p.id,
          provider: 'webhook',
          status: 'scheduled',
          attemptCount: 0,
          nextAttemptAt: '2030-05-01T08:00:00.000Z',
          idempotencyKey: expect.any(String),
          errorClass: null,
          lastError: null,
          deadReason: null,
          remoteId: null,
          remoteUrl: null,
        });
      }
      const byAccount = new Map<string, { id: string; text: string; idempotencyKey: string }>(
        p.jobs.map((j: { accountId: string }) => [j.accountId, j]),
      );
      expect([...byAccount.keys()].sort()).toEqual([a, b].sort());
      // The override lands in B's job only.
      expect(byAccount.get(a)!.text).toBe('Launch day');
      expect(byAccount.get(b)!.text).toBe('Launch day, B edition');
      expect(new Set(p.jobs.map((j: { idempotencyKey: string }) => j.idempotencyKey)).size).toBe(2);

      // Right after the 201: the post and both jobs are in the database.
      const posts = await q('SELECT text, workspace_id, scheduled_at, publish_by FROM posts WHERE id = $1', [p.id]);
      expect(posts).toEqual([
        {
          text: 'Launch day',
          workspace_id: adminWs,
          scheduled_at: new Date('2030-05-01T08:00:00Z'),
          publish_by: new Date('2030-05-02T08:00:00Z'),
        },
      ]);
      const jobs = await q<{
        id: string;
        account_id: string;
        status: string;
        text: string;
        text_override: string | null;
        idempotency_key: string;
        run_at: Date;
      }>(`SELECT id, account_id, status, payload->>'text' AS text, text_override, idempotency_key, run_at FROM jobs WHERE post_id = $1`, [
        p.id,
      ]);
      expect(jobs).toHaveLength(2);
      for (const row of jobs) {
        const view = byAccount.get(row.account_id)!;
        expect(row).toEqual({
          id: view.id,
          account_id: row.account_id,
          status: 'scheduled',
          text: view.text,
          text_override: row.account_id === b ? 'Launch day, B edition' : null,
          idempotency_key: view.idempotencyKey,
          run_at: new Date('2030-05-01T08:00:00Z'),
        });
      }
      // And GET shows the same post.
      const got = await t.http().get(`/v1/posts/${p.id}`).set(bearer(t.adminKey)).expect(200);
      expect(got.body).toEqual(p);
    });

    it('defaults: scheduledAt now, optional fields null', async () => {
      const before = Date.now();
      const res = await post()
        .send({ text: 'Now', targets: [{ accountId: a }] })
        .expect(201);
      expect(res.body).toMatchObject({ title: null, link: null, media: [], publishBy: null, metadata: null, status: 'scheduled' });
      const at = Date.parse(res.body.scheduledAt);
      expect(at).toBeGreaterThanOrEqual(before - 1000);
      expect(at).toBeLessThanOrEqual(Date.now() + 1000);
    });

    it('a target whose account is disabled gets a paused job', async () => {
      const d = (await createWebhookAccount(t, t.adminKey, 'http://127.0.0.1:9/disabled')).id;
      await t.http().patch(`/v1/accounts/${d}`).set(bearer(t.adminKey)).send({ status: 'disabled' }).expect(200);
      const res = await post()
        .send({ text: 'Paused?', targets: [{ accountId: a }, { accountId: d }], scheduledAt: FUTURE })
        .expect(201);
      const status = Object.fromEntries(res.body.jobs.map((j: { accountId: string; status: string }) => [j.accountId, j.status]));
      expect(status).toEqual({ [a]: 'scheduled', [d]: 'paused' });
      expect(res.body.status).toBe('scheduled');
      const rows = await q('SELECT account_id, status FROM jobs WHERE post_id = $1 ORDER BY status', [res.body.id]);
      expect(rows).toEqual([
        { account_id: d, status: 'paused' },
        { account_id: a, status: 'scheduled' },
      ]);
    });

    it('takes each account as it is now, right after a post to it: disabled, its job is paused; deleted, it is unknown', async () => {
      // The intake writes on the accounts as this process last read them, checked by the post's
      // own statement: a change between two posts must show in the second.
      const d = (await createWebhookAccount(t, t.adminKey, 'http://127.0.0.1:9/changing')).id;
      const send = () => post().send({ text: 'Now?', targets: [{ accountId: d }], scheduledAt: FUTURE });
      expect((await send().expect(201)).body.jobs.map((j: { status: string }) => j.status)).toEqual(['scheduled']);
      await t.http().patch(`/v1/accounts/${d}`).set(bearer(t.adminKey)).send({ status: 'disabled' }).expect(200);
      const paused = await send().expect(201);
      expect(paused.body.jobs.map((j: { status: string }) => j.status)).toEqual(['paused']);
      expect(await q('SELECT status FROM jobs WHERE post_id = $1', [paused.body.id])).toEqual([{ status: 'paused' }]);
      await t.http().patch(`/v1/accounts/${d}`).set(bearer(t.adminKey)).send({ status: 'active' }).expect(200);
      expect((await send().expect(201)).body.jobs.map((j: { status: string }) => j.status)).toEqual(['scheduled']);
      await t.http().delete(`/v1/accounts/${d}`).set(bearer(t.adminKey)).expect(204);
      const before = await counts();
      const unknown = await send().expect(400);
      expect(unknown.body.message).toBe(`targets.0.accountId: unknown account ${d}`);
      expect(await counts()).toEqual(before);
    });
  });

  describe('Idempotency-Key', () => {
    const postsWithText = async (text: string) =>
      (await q<{ n: number }>('SELECT count(*)::int AS n FROM posts WHERE text = $1', [text]))[0].n;

    it('same key and same body (other key order, other whitespace) replays the first answer', async () => {
      const key = `replay-${randomUUID()}`;
      const text = `Replay ${key}`;
      const first = await post()
        .set('Idempotency-Key', key)
        .set('Content-Type', 'application/json')
        .send(
          JSON.stringify({
            text,
            targets: [{ accountId: a, text: 'A only' }, { accountId: b }],
            scheduledAt: FUTURE,
            metadata: { x: 1, y: { p: true, q: null } },
          }),
        )
        .expect(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const reordered = `{
        "metadata" : { "y": {"q": null, "p": true}, "x": 1 },
        "scheduledAt":"${FUTURE}",   "targets": [ {"text":"A only","accountId":"${a}"}, {"accountId":"${b}"} ],
        "text": ${JSON.stringify(text)}
      }`;
      const again = await post().set('Idempotency-Key', key).set('Content-Type', 'application/json').send(reordered);
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
      expect(await postsWithText(text)).toBe(1);
      expect(await q('SELECT count(*)::int AS n FROM jobs WHERE post_id = $1', [first.body.id])).toEqual([{ n: 2 }]);
      const [row] = await q('SELECT state, response_status FROM idempotency_keys WHERE workspace_id = $1 AND key = $2', [adminWs, key]);
      expect(row).toEqual({ state: 'completed', response_status: 201 });
      // The audit trail has the post once (written by the post's own statement; a replay writes nothing).
      const audit = await t.http().get(`/v1/audit?kind=post&subjectId=${first.body.id}`).set(bearer(t.adminKey)).expect(200);
      expect(audit.body.data).toEqual([
        expect.objectContaining({
          kind: 'post',
          action: 'create',
          subjectId: first.body.id,
          summary: `Scheduled a post for 2 accounts: “${text}”`,
          actor: expect.objectContaining({ kind: 'key' }),
        }),
      ]);
    });

    it('same key, different body → 422, nothing written', async () => {
      const key = `mismatch-${randomUUID()}`;
      await post()
        .set('Idempotency-Key', key)
        .send({ text: 'First body', targets: [{ accountId: a }], scheduledAt: FUTURE })
        .expect(201);
      const message = await rejects(
        { text: 'Second body', targets: [{ accountId: a }], scheduledAt: FUTURE },
        422,
        /different request body/,
        { 'Idempotency-Key': key },
      );
      expect(message).toMatch(/Idempotency-Key/);
      // A different array order is a different body too.
      await post()
        .set('Idempotency-Key', `${key}-2`)
        .send({ text: 'Order', targets: [{ accountId: a }, { accountId: b }], scheduledAt: FUTURE })
        .expect(201);
      await rejects({ text: 'Order', targets: [{ accountId: b }, { accountId: a }], scheduledAt: FUTURE }, 422, /different request body/, {
        'Idempotency-Key': `${key}-2`,
      });
    });

    it('a key claimed by a request still in flight → 409; an abandoned claim is taken over', async () => {
      const key = `inflight-${randomUUID()}`;
      const body = { text: `In flight ${key}`, targets: [{ accountId: a }], scheduledAt: FUTURE };
      await q(`INSERT INTO idempotency_keys (workspace_id, key, request_hash, state) VALUES ($1, $2, $3, 'in_flight')`, [
        adminWs,
        key,
        canonicalHash(body),
      ]);
      await rejects(body, 409, /still being processed/, { 'Idempotency-Key': key });
      // Another body under that key is a mismatch, whatever the state.
      await rejects({ ...body, text: 'other' }, 422, /different request body/, { 'Idempotency-Key': key });
      // The claim is still there, untouched.
      expect(await q('SELECT state FROM idempotency_keys WHERE workspace_id = $1 AND key = $2', [adminWs, key])).toEqual([
        { state: 'in_flight' },
      ]);
      // A claim whose request died long ago (here: 3 minutes) is taken over by the same body.
      await q(`UPDATE idempotency_keys SET created_at = now() - interval '3 minutes' WHERE workspace_id = $1 AND key = $2`, [adminWs, key]);
      const res = await post().set('Idempotency-Key', key).send(body).expect(201);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
      expect(await postsWithText(body.text)).toBe(1);
    });

    it('the same key in another workspace is a new, separate post', async () => {
      const key = `shared-${randomUUID()}`;
      const mine = await post()
        .set('Idempotency-Key', key)
        .send({ text: 'Mine', targets: [{ accountId: a }], scheduledAt: FUTURE })
        .expect(201);
      const theirs = await post(otherKey)
        .set('Idempotency-Key', key)
        .send({ text: 'Theirs', targets: [{ accountId: otherAccount }], scheduledAt: FUTURE })
        .expect(201);
      expect(theirs.headers['idempotent-replayed']).toBeUndefined();
      expect(theirs.body.id).not.toBe(mine.body.id);
      expect(theirs.body.text).toBe('Theirs');
      const rows = await q('SELECT p.id, p.workspace_id <> $2 AS other FROM posts p WHERE p.id = ANY($1::uuid[]) ORDER BY other', [
        [mine.body.id, theirs.body.id],
        adminWs,
      ]);
      expect(rows).toEqual([
        { id: mine.body.id, other: false },
        { id: theirs.body.id, other: true },
      ]);
      // The identical body under that key in the other workspace is not a replay of ours either.
      const same = await post(otherKey)
        .set('Idempotency-Key', `${key}-x`)
        .send({ text: 'Mine', targets: [{ accountId: otherAccount }], scheduledAt: FUTURE })
        .expect(201);
      expect(same.body.id).not.toBe(mine.body.id);
    });

    it('a 400 does not burn the key: the corrected body gets a 201', async () => {
      const key = `fix-${randomUUID()}`;
      const text = `Fixed ${key}`;
      await rejects({ text, targets: [{ accountId: randomUUID() }], scheduledAt: FUTURE }, 400, /unknown account/, {
        'Idempotency-Key': key,
      });
      await rejects({ text, targets: [{ accountId: a }], scheduledAt: FUTURE, bogus: true }, 400, /bogus is not allowed/, {
        'Idempotency-Key': key,
      });
      const res = await post()
        .set('Idempotency-Key', key)
        .send({ text, targets: [{ accountId: a }], scheduledAt: FUTURE });
      expect(res.status).toBe(201);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
      const replay = await post()
        .set('Idempotency-Key', key)
        .send({ text, targets: [{ accountId: a }], scheduledAt: FUTURE })
        .expect(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body.id).toBe(res.body.id);
      expect(await postsWithText(text)).toBe(1);
    });

    it('a key longer than 255 characters → 400; 255 is fine', async () => {
      const body = { text: 'Long key', targets: [{ accountId: a }], scheduledAt: FUTURE };
      await rejects(body, 400, 'Idempotency-Key must be 1 to 255 characters', { 'Idempotency-Key': 'k'.repeat(256) });
      await rejects(body, 400, 'Idempotency-Key must be 1 to 255 characters', { 'Idempotency-Key': '' });
      await post().set('Idempotency-Key', `${randomUUID()}`.padEnd(255, 'k')).send(body).expect(201);
    });

    it('5 identical concurrent requests with one key: exactly one post, the others replayed or 409, never 5xx', async () => {
      for (let round = 0; round < 3; round++) {
        const key = `race-${round}-${randomUUID()}`;
        const text = `Race ${key}`;
        const body = { text, targets: [{ accountId: a }, { accountId: b }], scheduledAt: FUTURE };
        const results = await Promise.all(Array.from({ length: 5 }, () => post().set('Idempotency-Key', key).send(body)));
        const statuses = results.map((r) => r.status);
        for (const s of statuses) expect([201, 409]).toContain(s);
        const fresh = results.filter((r) => r.status === 201 && r.headers['idempotent-replayed'] === undefined);
        expect(fresh).toHaveLength(1);
        for (const r of results.filter((r) => r.status === 201)) expect(r.body.id).toBe(fresh[0].body.id);
        for (const r of results.filter((r) => r.status === 409)) expect(r.body.message).toMatch(/still being processed/);
        expect(await postsWithText(text)).toBe(1);
        expect(await q('SELECT count(*)::int AS n FROM jobs WHERE post_id = $1', [fresh[0].body.id])).toEqual([{ n: 2 }]);
      }
    });
  });

  describe('GET /v1/posts', () => {
    it('lists newest first, with a cursor', async () => {
      const ws = await newWorkspace('Paging posts');
      const acc = (await createWebhookAccount(t, ws.key, 'http://127.0.0.1:9/p')).id;
      const ids: string[] = [];
      for (let i = 1; i <= 5; i++) {
        ids.push((await createPost(t, ws.key, { text: `p${i}`, targets: [{ accountId: acc }], scheduledAt: FUTURE })).id);
        await sleep(3);
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      const pages: number[] = [];
      do {
        const url: string = `/v1/posts?limit=2${cursor ? `&cursor=${cursor}` : ''}`;
        const res = await t.http().get(url).set(bearer(ws.key)).expect(200);
        pages.push(res.body.data.length);
        for (const p of res.body.data) {
          expect(p.jobs).toHaveLength(1);
          seen.push(p.text);
        }
        cursor = res.body.nextCursor;
      } while (cursor);
      expect(pages).toEqual([2, 2, 1]);
      expect(seen).toEqual(['p5', 'p4', 'p3', 'p2', 'p1']);
      const bad = await t.http().get('/v1/posts?cursor=nonsense').set(bearer(ws.key)).expect(400);
      expect(bad.body.message).toMatch(/cursor/);
      await t.http().get('/v1/posts?status=bogus').set(bearer(ws.key)).expect(400);
    });

    it('the status filter agrees with the status GET /v1/posts/:id shows, for every combination', async () => {
      const ws = await newWorkspace('Statuses');
      const acc: string[] = [];
      for (const n of ['x', 'y']) acc.push((await createWebhookAccount(t, ws.key, `http://127.0.0.1:9/${n}`)).id);
      type JobState = { status: string; attempts?: number };
      const S = (status: string, attempts = 0): JobState => ({ status, attempts });
      const cases: [string, JobState[]][] = [
        ['scheduled', [S('scheduled'), S('scheduled')]],
        ['scheduled', [S('paused'), S('scheduled')]],
        ['publishing', [S('scheduled', 1)]],
        ['publishing', [S('in_progress', 1), S('scheduled')]],
        ['publishing', [S('succeeded', 1), S('scheduled')]],
        ['publishing', [S('paused', 1), S('succeeded', 1)]],
        ['publishing', [S('dead', 1), S('scheduled', 2)]],
        ['published', [S('succeeded', 1), S('succeeded', 2)]],
        ['published', [S('succeeded', 1), S('cancelled')]],
        ['partially_failed', [S('succeeded', 1), S('dead', 3)]],
        ['partially_failed', [S('succeeded', 1), S('discarded', 1)]],
        ['failed', [S('dead', 1), S('discarded', 1)]],
        ['failed', [S('dead', 16), S('cancelled')]],
        ['cancelled', [S('cancelled'), S('cancelled')]],
        ['cancelled', [S('cancelled', 1)]],
      ];
      const expected = new Map<string, string>();
      for (const [status, jobs] of cases) {
        const p = await createPost(t, ws.key, {
          text: `${status} ${jobs.map((j) => `${j.status}/${j.attempts}`).join(',')}`,
          targets: jobs.map((_, i) => ({ accountId: acc[i] })),
          scheduledAt: FUTURE,
        });
        for (const [i, j] of jobs.entries()) {
          await q(
            `UPDATE job_state SET status = $2, attempt_count = $3,
               dead_reason = CASE WHEN $2 = 'dead' THEN 'permanent' END,
               lease_owner = CASE WHEN $2 = 'in_progress' THEN 'test' END,
               lease_expires_at = CASE WHEN $2 = 'in_progress' THEN now() + interval '1 hour' END
             WHERE job_id IN (SELECT id FROM jobs WHERE post_id = $1 AND account_id = $4)`,
            [p.id, j.status, j.attempts ?? 0, acc[i]],
          );
        }
        expected.set(p.id, status);
      }
      for (const [id, status] of expected) {
        const got = await t.http().get(`/v1/posts/${id}`).set(bearer(ws.key)).expect(200);
        expect({ text: got.body.text, status: got.body.status }).toEqual({ text: got.body.text, status });
      }
      for (const status of ['scheduled', 'publishing', 'published', 'partially_failed', 'failed', 'cancelled']) {
        const res = await t.http().get(`/v1/posts?status=${status}&limit=200`).set(bearer(ws.key)).expect(200);
        const listed = res.body.data.map((p: { id: string }) => p.id).sort();
        const want = [...expected]
          .filter(([, s]) => s === status)
          .map(([id]) => id)
          .sort();
        expect({ status, listed }).toEqual({ status, listed: want });
        for (const p of res.body.data) expect(p.status).toBe(status);
      }
      // The filter pages too.
      const page1 = await t.http().get('/v1/posts?status=publishing&limit=3').set(bearer(ws.key)).expect(200);
      expect(page1.body.data).toHaveLength(3);
      const page2 = await t
        .http()
        .get(`/v1/posts?status=publishing&limit=3&cursor=${page1.body.nextCursor}`)
        .set(bearer(ws.key))
        .expect(200);
      expect(page2.body.data).toHaveLength(2);
      expect(page2.body.nextCursor).toBeNull();
    });

    it('filters by scheduledAt range: from inclusive, to exclusive', async () => {
      const ws = await newWorkspace('Range');
      const acc = (await createWebhookAccount(t, ws.key, 'http://127.0.0.1:9/r')).id;
      for (const month of ['01', '02', '03', '04']) {
        await createPost(t, ws.key, { text: `m${month}`, targets: [{ accountId: acc }], scheduledAt: `2031-${month}-01T00:00:00Z` });
      }
      const texts = async (query: string) =>
        (await t.http().get(`/v1/posts?${query}`).set(bearer(ws.key)).expect(200)).body.data.map((p: { text: string }) => p.text).sort();
      expect(await texts('from=2031-02-01T00:00:00Z&to=2031-04-01T00:00:00Z')).toEqual(['m02', 'm03']);
      expect(await texts('from=2031-01-15T00:00:00Z')).toEqual(['m02', 'm03', 'm04']);
      expect(await texts('to=2031-02-01T00:00:01Z')).toEqual(['m01', 'm02']);
      expect(await texts(`from=${encodeURIComponent('2031-03-01T01:00:00+01:00')}`)).toEqual(['m03', 'm04']);
      expect(await texts('from=2031-05-01T00:00:00Z')).toEqual([]);
      const bad = await t.http().get('/v1/posts?from=2031-02-01T00:00:00').set(bearer(ws.key)).expect(400);
      expect(bad.body.message).toMatch(/^from must be an ISO 8601/);
    });

    it("another workspace's post and a non-UUID id are 404", async () => {
      const theirs = await createPost(t, otherKey, { text: 'Private', targets: [{ accountId: otherAccount }], scheduledAt: FUTURE });
      const res = await t.http().get(`/v1/posts/${theirs.id}`).set(bearer(t.adminKey)).expect(404);
      expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: `post "${theirs.id}" was not found` });
      const unknown = randomUUID();
      const res2 = await t.http().get(`/v1/posts/${unknown}`).set(bearer(t.adminKey)).expect(404);
      expect(res2.body.message).toBe(`post "${unknown}" was not found`);
      await t.http().get('/v1/posts/not-a-uuid').set(bearer(t.adminKey)).expect(404);
      const list = await t.http().get('/v1/posts?limit=200').set(bearer(t.adminKey)).expect(200);
      expect(list.body.data.map((p: { id: string }) => p.id)).not.toContain(theirs.id);
      // Their owner sees it.
      await t.http().get(`/v1/posts/${theirs.id}`).set(bearer(otherKey)).expect(200);
    });
  });

  describe('PATCH /v1/posts/:id', () => {
    const snapshot = async (postId: string) => ({
      post: await q('SELECT text, title, link, metadata, scheduled_at, publish_by, updated_at FROM posts WHERE id = $1', [postId]),
      jobs: await q('SELECT id, status, payload, run_at, publish_by, text_override, updated_at FROM jobs WHERE post_id = $1 ORDER BY id', [
        postId,
      ]),
    });

    it('edits the text and reschedules before any job started; a target override is kept', async () => {
      const p = await createPost(t, t.adminKey, {
        text: 'Draft',
        targets: [{ accountId: a, text: 'Only for A' }, { accountId: b }],
        scheduledAt: '2030-01-01T09:00:00Z',
      });
      const res = await t
        .http()
        .patch(`/v1/posts/${p.id}`)
        .set(bearer(t.adminKey))
        .send({
          text: 'Final',
          title: 'T',
          scheduledAt: '2030-06-01T12:00:00+02:00',
          publishBy: '2030-06-02T00:00:00Z',
          metadata: { v: 2 },
        })
        .expect(200);
      expect(res.body).toMatchObject({
        id: p.id,
        status: 'scheduled',
        text: 'Final',
        title: 'T',
        scheduledAt: '2030-06-01T10:00:00.000Z',
        publishBy: '2030-06-02T00:00:00.000Z',
        metadata: { v: 2 },
      });
      const texts = Object.fromEntries(res.body.jobs.map((j: { accountId: string; text: string }) => [j.accountId, j.text]));
      expect(texts).toEqual({ [a]: 'Only for A', [b]: 'Final' });
      for (const j of res.body.jobs) expect(j.nextAttemptAt).toBe('2030-06-01T10:00:00.000Z');
      const rows = await q<{
        account_id: string;
        text: string;
        title: string;
        sched: string;
        run_at: Date;
        publish_by: Date;
        metadata: unknown;
      }>(
        `SELECT account_id, payload->>'text' AS text, payload->>'title' AS title, payload->>'scheduledAt' AS sched, payload->'metadata' AS metadata,
                run_at, publish_by FROM jobs WHERE post_id = $1`,
        [p.id],
      );
      expect(Object.fromEntries(rows.map((r) => [r.account_id, r.text]))).toEqual({ [a]: 'Only for A', [b]: 'Final' });
      for (const r of rows) {
        expect(r).toMatchObject({
          title: 'T',
          sched: '2030-06-01T10:00:00.000Z',
          metadata: { v: 2 },
          run_at: new Date('2030-06-01T10:00:00Z'),
          publish_by: new Date('2030-06-02T00:00:00Z'),
        });
      }
      expect(await q('SELECT text, scheduled_at FROM posts WHERE id = $1', [p.id])).toEqual([
        { text: 'Final', scheduled_at: new Date('2030-06-01T10:00:00Z') },
      ]);
      // A second edit of a single field keeps the rest.
      const again = await t.http().patch(`/v1/posts/${p.id}`).set(bearer(t.adminKey)).send({ link: 'https://example.com/x' }).expect(200);
      expect(again.body).toMatchObject({
        text: 'Final',
        title: 'T',
        link: 'https://example.com/x',
        scheduledAt: '2030-06-01T10:00:00.000Z',
      });
      expect(await q(`SELECT DISTINCT payload->>'link' AS link FROM jobs WHERE post_id = $1`, [p.id])).toEqual([
        { link: 'https://example.com/x' },
      ]);
    });

    it('409 once a job started, and nothing changes', async () => {
      const p = await createPost(t, t.adminKey, { text: 'Started', targets: [{ accountId: a }, { accountId: b }], scheduledAt: FUTURE });
      await q('UPDATE job_state SET attempt_count = 1 WHERE job_id IN (SELECT id FROM jobs WHERE post_id = $1 AND account_id = $2)', [
        p.id,
        a,
      ]);
      const before = await snapshot(p.id);
      const res = await t
        .http()
        .patch(`/v1/posts/${p.id}`)
        .set(bearer(t.adminKey))
        .send({ text: 'Too late', scheduledAt: '2030-02-01T00:00:00Z' })
        .expect(409);
      expect(res.body).toEqual({
        statusCode: 409,
        error: 'Conflict',
        message: expect.stringMatching(/no longer be edited: 1 of its jobs already started/),
      });
      expect(await snapshot(p.id)).toEqual(before);
      // A job in progress (attempt not yet counted) blocks too.
      const p2 = await createPost(t, t.adminKey, { text: 'In flight', targets: [{ accountId: a }], scheduledAt: FUTURE });
      await q(
        `UPDATE job_state SET status = 'in_progress', lease_owner = 'w', lease_expires_at = now() + interval '1 minute' WHERE job_id IN (SELECT id FROM jobs WHERE post_id = $1)`,
        [p2.id],
      );
      await t.http().patch(`/v1/posts/${p2.id}`).set(bearer(t.adminKey)).send({ text: 'Too late' }).expect(409);
    });

    it('validation errors are 400 and change nothing', async () => {
      const p = await createPost(t, t.adminKey, {
        text: 'Stable',
        targets: [{ accountId: a, text: 'A' }, { accountId: b }],
        scheduledAt: '2030-03-01T00:00:00Z',
        publishBy: '2030-03-05T00:00:00Z',
      });
      const before = await snapshot(p.id);
      const bad: [Record<string, unknown>, RegExp][] = [
        [{ text: 5 }, /^text must be a string/],
        [{ text: null }, /text/],
        [{ text: '' }, /^text should not be empty/],
        [{ text: 'x'.repeat(10_001) }, /^text must be shorter than or equal to 10000/],
        [{ targets: [{ accountId: a }] }, /^targets can be changed only on a draft/],
        [{ scheduledAt: '2030-03-01T00:00:00' }, /^scheduledAt must be an ISO 8601 date-time with a time zone offset/],
        [{ scheduledAt: '2030-02-30T00:00:00Z' }, /^scheduledAt is not a real date-time/],
        [{ scheduledAt: '2030-03-10T00:00:00Z' }, /^publishBy .* must be after scheduledAt/],
        [{ publishBy: '2021-01-01T00:00:00Z', scheduledAt: '2020-01-01T00:00:00Z' }, /is in the past/],
        [{ link: 'javascript:alert(1)' }, /^link must be an absolute http\(s\) URL/],
        [{ metadata: [1] }, /^metadata must be an object/],
        [{ media: [randomUUID()] }, /^media: unknown media id/],
      ];
      for (const [body, message] of bad) {
        const res = await t.http().patch(`/v1/posts/${p.id}`).set(bearer(t.adminKey)).send(body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: expect.any(String) });
        expect(res.body.message).toMatch(message);
      }
      expect(await snapshot(p.id)).toEqual(before);
    });

    it("another workspace's post is 404", async () => {
      const theirs = await createPost(t, otherKey, { text: 'Theirs', targets: [{ accountId: otherAccount }], scheduledAt: FUTURE });
      await t.http().patch(`/v1/posts/${theirs.id}`).set(bearer(t.adminKey)).send({ text: 'Hijacked' }).expect(404);
      expect(await q('SELECT text FROM posts WHERE id = $1', [theirs.id])).toEqual([{ text: 'Theirs' }]);
    });
  });

  describe('drafts (status: draft)', () => {
    const patch = (id: string, body: object) => t.http().patch(`/v1/posts/${id}`).set(bearer(t.adminKey)).send(body);

    it('keeps a draft without a time and without jobs, lists it, and never queues it', async () => {
      const before = await counts();
      const res = await post()
        .send({ status: 'draft', text: 'A thought for later', targets: [{ accountId: a }, { accountId: b, text: 'B only' }] })
        .expect(201);
      expect(res.body).toMatchObject({
        status: 'draft',
        text: 'A thought for later',
        scheduledAt: null,
        publishBy: null,
        draftTargets: [{ accountId: a }, { accountId: b, text: 'B only' }],
        jobs: [],
      });
      expect(await counts()).toEqual({ ...before, posts: before.posts + 1 });
      const got = await t.http().get(`/v1/posts/${res.body.id}`).set(bearer(t.adminKey)).expect(200);
      expect(got.body.status).toBe('draft');
      const drafts = await t.http().get('/v1/posts?status=draft&limit=200').set(bearer(t.adminKey)).expect(200);
      expect(drafts.body.data.map((x: { id: string }) => x.id)).toContain(res.body.id);
      // Lists by time hold posts with a time: a draft is in none of them.
      const byTime = await t.http().get('/v1/posts?from=2000-01-01T00:00:00Z&limit=200').set(bearer(t.adminKey)).expect(200);
      expect(byTime.body.data.map((x: { id: string }) => x.id)).not.toContain(res.body.id);
    });

    it('refuses a draft with a time, or a draft to an unknown account, writing nothing', async () => {
      await rejects(
        { status: 'draft', text: 'x', targets: [{ accountId: a }], scheduledAt: FUTURE },
        400,
        'a draft has no time: leave out scheduledAt and publishBy (give them when scheduling it: PATCH /v1/posts/{id} with status "scheduled")',
      );
      await rejects(
        { status: 'draft', text: 'x', targets: [{ accountId: otherAccount }] },
        400,
        `targets.0.accountId: unknown account ${otherAccount}`,
      );
      await rejects({ status: 'later', text: 'x', targets: [{ accountId: a }] }, 400, 'status must be one of: scheduled, draft');
    });

    it('edits a draft (its accounts too), then schedules it: the jobs appear with the time, checked as a new post', async () => {
      const d = (
        await post()
          .send({ status: 'draft', text: 'Draft one', targets: [{ accountId: a }] })
          .expect(201)
      ).body;
      const edited = await patch(d.id, { text: 'Draft one, edited', targets: [{ accountId: b }, { accountId: c }] }).expect(200);
      expect(edited.body).toMatchObject({
        status: 'draft',
        text: 'Draft one, edited',
        draftTargets: [{ accountId: b }, { accountId: c }],
        jobs: [],
      });
      // A time alone does not schedule a draft: it says how.
      const noStatus = await patch(d.id, { scheduledAt: FUTURE }).expect(400);
      expect(noStatus.body.message).toBe('a draft has no time: send status "scheduled" with scheduledAt (default: now) to schedule it');
      const scheduled = await patch(d.id, { status: 'scheduled', scheduledAt: '2030-02-01T10:00:00+05:30' }).expect(200);
      expect(scheduled.body).toMatchObject({ status: 'scheduled', scheduledAt: '2030-02-01T04:30:00.000Z', draftTargets: null });
      expect(scheduled.body.jobs.map((j: { accountId: string; status: string }) => [j.accountId, j.status]).sort()).toEqual(
        [
          [b, 'scheduled'],
          [c, 'scheduled'],
        ].sort(),
      );
      expect(await q('SELECT count(*)::int AS n FROM jobs WHERE post_id = $1', [d.id])).toEqual([{ n: 2 }]);
      // Scheduled, its accounts are fixed.
      const targets = await patch(d.id, { targets: [{ accountId: a }] }).expect(400);
      expect(targets.body.message).toMatch(/^targets can be changed only on a draft/);
    });

    it('checks platform limits when a draft is scheduled, not while it is kept', async () => {
      // A Bluesky account by SQL (as platform-validation.test.ts does): no PDS is needed to refuse a text.
      const [{ id: bsky }] = await q<{ id: string }>(
        `INSERT INTO accounts (workspace_id, provider, name, credentials) VALUES ($1, 'bluesky', 'BS', 'x') RETURNING id`,
        [adminWs],
      );
      const d = (
        await post()
          .send({ status: 'draft', text: 'y'.repeat(301), targets: [{ accountId: bsky }] })
          .expect(201)
      ).body;
      const refused = await patch(d.id, { status: 'scheduled', scheduledAt: FUTURE }).expect(400);
      expect(refused.body.message).toBe('targets.0 (bluesky): text is 301 graphemes, the limit is 300');
      expect((await t.http().get(`/v1/posts/${d.id}`).set(bearer(t.adminKey)).expect(200)).body).toMatchObject({
        status: 'draft',
        jobs: [],
      });
      const ok = await patch(d.id, { status: 'scheduled', scheduledAt: FUTURE, text: 'y'.repeat(300) }).expect(200);
      expect(ok.body.status).toBe('scheduled');
    });

    it('deletes a draft on DELETE (it never had jobs): the answer is its last state, cancelled', async () => {
      const d = (
        await post()
          .send({ status: 'draft', text: 'Forget me', targets: [{ accountId: a }] })
          .expect(201)
      ).body;
      const res = await t.http().delete(`/v1/posts/${d.id}`).set(bearer(t.adminKey)).expect(200);
      expect(res.body).toMatchObject({ id: d.id, status: 'cancelled', jobs: [] });
      await t.http().get(`/v1/posts/${d.id}`).set(bearer(t.adminKey)).expect(404);
    });
  });

  describe('DELETE /v1/posts/:id', () => {
    it('cancels the waiting jobs: the post becomes cancelled', async () => {
      const p = await createPost(t, t.adminKey, { text: 'Cancel me', targets: [{ accountId: a }, { accountId: b }], scheduledAt: FUTURE });
      await q(`UPDATE job_state SET status = 'paused' WHERE job_id IN (SELECT id FROM jobs WHERE post_id = $1 AND account_id = $2)`, [
        p.id,
        b,
      ]);
      const res = await t.http().delete(`/v1/posts/${p.id}`).set(bearer(t.adminKey)).expect(200);
      expect(res.body.status).toBe('cancelled');
      expect(res.body.jobs.map((j: { status: string }) => j.status)).toEqual(['cancelled', 'cancelled']);
      expect(await q('SELECT DISTINCT status FROM jobs WHERE post_id = $1', [p.id])).toEqual([{ status: 'cancelled' }]);
      const got = await t.http().get(`/v1/posts/${p.id}`).set(bearer(t.adminKey)).expect(200);
      expect(got.body.status).toBe('cancelled');
      const listed = await t.http().get('/v1/posts?status=cancelled&limit=200').set(bearer(t.adminKey)).expect(200);
      expect(listed.body.data.map((x: { id: string }) => x.id)).toContain(p.id);
    });

    it('leaves a succeeded job succeeded and an attempt in flight running', async () => {
      const p = await createPost(t, t.adminKey, {
        text: 'Half done',
        targets: [{ accountId: a }, { accountId: b }, { accountId: c }],
        scheduledAt: FUTURE,
      });
      await q(
        `UPDATE job_state SET status = 'succeeded', attempt_count = 1, remote_url = 'https://x.example/1' WHERE job_id IN (SELECT id FROM jobs WHERE post_id = $1 AND account_id = $2)`,
        [p.id, a],
      );
      await q(
        `UPDATE job_state SET status = 'in_progress', attempt_count = 1, lease_owner = 'w', lease_expires_at = now() + interval '1 minute' WHERE job_id IN (SELECT id FROM jobs WHERE post_id = $1 AND account_id = $2)`,
        [p.id, c],
      );
      const res = await t.http().delete(`/v1/posts/${p.id}`).set(bearer(t.adminKey)).expect(200);
      const status = Object.fromEntries(res.body.jobs.map((j: { accountId: string; status: string }) => [j.accountId, j.status]));
      expect(status).toEqual({ [a]: 'succeeded', [b]: 'cancelled', [c]: 'in_progress' });
      const rows = await q<{ account_id: string; status: string }>('SELECT account_id, status FROM jobs WHERE post_id = $1', [p.id]);
      expect(Object.fromEntries(rows.map((r) => [r.account_id, r.status]))).toEqual({
        [a]: 'succeeded',
        [b]: 'cancelled',
        [c]: 'in_progress',
      });
      expect(res.body.status).toBe('publishing');
      // Once the in-flight attempt succeeds, the post counts as published (cancelled jobs aside).
      await q(
        `UPDATE job_state SET status = 'succeeded', lease_owner = NULL, lease_expires_at = NULL WHERE job_id IN (SELECT id FROM jobs WHERE post_id = $1 AND account_id = $2)`,
        [p.id, c],
      );
      expect((await t.http().get(`/v1/posts/${p.id}`).set(bearer(t.adminKey)).expect(200)).body.status).toBe('published');
    });

    it("another workspace's post is 404 and its jobs stay", async () => {
      const theirs = await createPost(t, otherKey, { text: 'Keep', targets: [{ accountId: otherAccount }], scheduledAt: FUTURE });
      await t.http().delete(`/v1/posts/${theirs.id}`).set(bearer(t.adminKey)).expect(404);
      await t.http().delete('/v1/posts/123').set(bearer(t.adminKey)).expect(404);
      expect(await q('SELECT status FROM jobs WHERE post_id = $1', [theirs.id])).toEqual([{ status: 'scheduled' }]);
    });
  });
});
