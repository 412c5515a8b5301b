import { randomUUID } from 'node:crypto';
import { canonicalHash } from '../src/common/canonical-json';
import { bootTestApp, TestApp } from './support/app';
import { withClient } from './support/database';
import { createWebhookAccount } from './support/engine';
import { bearer } from './support/config';

/**
 * POST /v1/posts/batch against a real app and database (docs/api.md "Bulk"). The worker is off:
 * what is counted here is what the request wrote.
 */

const FUTURE = '2030-01-01T09:00:00Z';

interface Counts {
  posts: number;
  jobs: number;
  keys: number;
  audit: number;
}

interface ItemResult {
  index: number;
  status: number;
  post?: { id: string; text: string; status: string; jobs: unknown[] };
  error?: { statusCode: number; error: string; message: string };
}

describe('POST /v1/posts/batch', () => {
  let t: TestApp;
  let ws: string;
  let a: string;
  let b: string;
  let otherAccount: string;

  const q = <T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> =>
    withClient(t.databaseUrl, async (db) => (await db.query(text, params)).rows as T[]);
  const counts = async (): Promise<Counts> =>
    (
      await q<Counts>(
        `SELECT (SELECT count(*)::int FROM posts) AS posts, (SELECT count(*)::int FROM jobs) AS jobs,
                (SELECT count(*)::int FROM idempotency_keys) AS keys, (SELECT count(*)::int FROM audit_events) AS audit`,
      )
    )[0];
  const postsWithText = async (prefix: string) =>
    (await q<{ n: number }>(`SELECT count(*)::int AS n FROM posts WHERE text LIKE $1`, [`${prefix}%`]))[0].n;
  const batch = (key = t.adminKey) => t.http().post('/v1/posts/batch').set(bearer(key));
  const single = () => t.http().post('/v1/posts').set(bearer(t.adminKey));
  const ok = (text: string, extra: Record<string, unknown> = {}) => ({ text, targets: [{ accountId: a }], scheduledAt: FUTURE, ...extra });

  /** Sends a batch that must be refused as a whole: the status, the error shape and nothing written. */
  async function refused(body: unknown, status: number, message: RegExp, headers: Record<string, string> = {}) {
    const before = await counts();
    let req = batch().set(headers);
    if (typeof body === 'string') req = req.set('Content-Type', 'application/json');
    const res = await req.send(body as object);
    expect({ status: res.status, body: res.body }).toEqual({
      status,
      body: { statusCode: status, error: expect.any(String), message: expect.stringMatching(message) },
    });
    expect(await counts()).toEqual(before);
  }

  beforeAll(async () => {
    t = await bootTestApp({ config: { allowPrivateUrls: true } });
    a = (await createWebhookAccount(t, t.adminKey, 'http://127.0.0.1:9/a')).id;
    b = (await createWebhookAccount(t, t.adminKey, 'http://127.0.0.1:9/b')).id;
    ws = (await q<{ w: string }>('SELECT workspace_id AS w FROM accounts WHERE id = $1', [a]))[0].w;
    const other = await t.http().post('/v1/workspaces').set(bearer(t.adminKey)).send({ name: 'Other' }).expect(201);
    otherAccount = (await createWebhookAccount(t, other.body.apiKey.key as string, 'http://127.0.0.1:9/o')).id;
  });
  afterAll(() => t.close());

  it('creates the valid items, refuses each invalid one with the error POST /v1/posts gives for it, and answers 207 in order', async () => {
    const run = randomUUID();
    const items: Record<string, unknown>[] = [
      ok(`Batch ${run} first`),
      { ...ok(`Batch ${run} unknown field`), bogus: true },
      ok(`Batch ${run} bad type`, { title: ['x'] }),
      { text: `Batch ${run} unknown account`, targets: [{ accountId: randomUUID() }], scheduledAt: FUTURE },
      { text: `Batch ${run} foreign account`, targets: [{ accountId: otherAccount }], scheduledAt: FUTURE },
      { text: `Batch ${run} twice`, targets: [{ accountId: a }, { accountId: a }] },
      ok('x'.repeat(10_001)),
      ok(`Batch ${run} bad link`, { link: 'ftp://example.com' }),
      ok(`Batch ${run} deadline`, { publishBy: '2029-01-01T00:00:00Z' }),
      { text: `Batch ${run} draft`, targets: [{ accountId: b }], status: 'draft' },
      { text: `Batch ${run} two accounts`, targets: [{ accountId: a }, { accountId: b, text: 'shorter' }], scheduledAt: FUTURE },
    ];
    const before = await counts();
    const res = await batch().send({ posts: items });
    expect(res.status).toBe(207);
    const results = res.body.results as ItemResult[];
    expect(results.map((r) => [r.index, r.status])).toEqual(items.map((_, i) => [i, [0, 9, 10].includes(i) ? 201 : 400]));
    expect({ created: res.body.created, failed: res.body.failed }).toEqual({ created: 3, failed: 8 });

    // Each refusal is exactly what POST /v1/posts answers for that item alone (which writes nothing).
    for (const r of results.filter((x) => x.status === 400)) {
      const alone = await single().send(items[r.index]);
      expect({ index: r.index, status: alone.status, body: alone.body }).toEqual({ index: r.index, status: 400, body: r.error });
    }
    expect(results[1].error?.message).toBe('bogus is not allowed (unknown field)');
    expect(results[3].error?.message).toMatch(/^targets\.0\.accountId: unknown account /);
    // Another workspace's account reads as unknown, not as "someone else's".
    expect(results[4].error?.message).toBe(`targets.0.accountId: unknown account ${otherAccount}`);

    // Created: three posts (one a draft, without jobs) and three jobs, each post as GET shows it.
    expect(await counts()).toMatchObject({ posts: before.posts + 3, jobs: before.jobs + 3, keys: before.keys });
    for (const r of results.filter((x) => x.status === 201)) {
      const got = await t.http().get(`/v1/posts/${r.post!.id}`).set(bearer(t.adminKey)).expect(200);
      expect(got.body).toEqual(r.post);
    }
    expect(results[9].post?.status).toBe('draft');
    expect(results[10].post?.jobs).toHaveLength(2);
    // Each created item is in the audit trail once, as a single post would be.
    expect((await counts()).audit - before.audit).toBe(3);
  });

  it('answers 201 when every item is created', async () => {
    const run = randomUUID();
    const res = await batch()
      .send({ posts: [ok(`All ${run} 1`), ok(`All ${run} 2`)] })
      .expect(201);
    expect(res.body).toEqual({
      created: 2,
      failed: 0,
      results: [
        { index: 0, status: 201, post: expect.objectContaining({ text: `All ${run} 1`, status: 'scheduled' }) },
        { index: 1, status: 201, post: expect.objectContaining({ text: `All ${run} 2`, status: 'scheduled' }) },
      ],
    });
    expect(await postsWithText(`All ${run}`)).toBe(2);
  });

  it('queues items with queue: true, each in its own slot, through the posting queue', async () => {
    const run = randomUUID();
    const queued = (n: number) => ({ text: `Queued ${run} ${n}`, targets: [{ accountId: a }], queue: true });
    // No slots yet: each queued item is that item's 409, saying why; the others are created.
    const none = await batch()
      .send({ posts: [queued(0), ok(`Queued ${run} plain`)] })
      .expect(207);
    expect(none.body.results.map((r: ItemResult) => [r.status, r.error?.message ?? null])).toEqual([
      [409, expect.stringMatching(/^queue: /)],
      [201, null],
    ]);
    await t
      .http()
      .put('/v1/settings/queue')
      .set(bearer(t.adminKey))
      .send({
        timezone: 'Europe/Paris',
        slots: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].flatMap((day) => [
          { day, time: '09:00' },
          { day, time: '17:00' },
        ]),
      })
      .expect(200);
    const res = await batch()
      .send({ posts: [queued(1), queued(2), queued(3), { ...queued(4), scheduledAt: FUTURE }] })
      .expect(207);
    const results = res.body.results as (ItemResult & { post?: { scheduledAt: string; queueSlot: { at: string } | null } })[];
    expect(results.map((r) => r.status)).toEqual([201, 201, 201, 400]);
    expect(results[3].error?.message).toMatch(/^queue and scheduledAt conflict/);
    const slots = results.slice(0, 3).map((r) => r.post!.queueSlot!.at);
    // Three different slots, in order, each the post's time, each at 09:00 or 17:00 in Paris.
    expect(new Set(slots).size).toBe(3);
    expect([...slots].sort()).toEqual(slots);
    results.slice(0, 3).forEach((r) => expect(r.post!.scheduledAt).toBe(r.post!.queueSlot!.at));
    for (const at of slots) expect(['08:00', '16:00']).toContain(at.slice(11, 16)); // UTC+01:00 in winter
    expect(await postsWithText(`Queued ${run}`)).toBe(4);
  });

  describe('the envelope: 400 and nothing created', () => {
    it('posts missing, not an array, empty, over 100, an item that is not an object, an unknown field', async () => {
      const run = randomUUID();
      await refused({}, 400, /^posts /);
      await refused({ posts: ok(`Env ${run}`) }, 400, /^posts must be an array/);
      await refused({ posts: [] }, 400, /^posts is empty/);
      await refused({ posts: Array.from({ length: 101 }, (_, i) => ok(`Env ${run} ${i}`)) }, 400, /more than 100/);
      await refused({ posts: [ok(`Env ${run}`), 'a post'] }, 400, /^posts must be an array of post objects/);
      await refused({ posts: [ok(`Env ${run}`), null] }, 400, /^posts must be an array of post objects/);
      await refused({ posts: [ok(`Env ${run}`)], dryRun: true }, 400, /^dryRun is not allowed/);
      await refused([ok(`Env ${run}`)], 400, /posts/);
      await refused('{"posts": [', 400, /^The request body is not valid JSON$/);
      expect(await postsWithText(`Env ${run}`)).toBe(0);
    });

    it('takes exactly 100 posts', async () => {
      const run = randomUUID();
      const started = Date.now();
      const res = await batch()
        .send({ posts: Array.from({ length: 100 }, (_, i) => ok(`Hundred ${run} ${i}`)) })
        .expect(201);
      const ms = Date.now() - started;
      expect(res.body.created).toBe(100);
      expect(await postsWithText(`Hundred ${run}`)).toBe(100);
      // A figure for docs/api.md (not a limit: the machine is shared).
      process.stdout.write(`100 posts in one batch: ${ms} ms\n`);
    });

    it('has a 5 MB body limit of its own (the single post keeps its 1 MB)', async () => {
      const run = randomUUID();
      // 40 posts of 9,000 characters × 3 bytes (€) with 4 KB metadata each: about 1.3 MB, over the general limit.
      const big = (i: number) => ok(`Big ${run} ${i} ${'€'.repeat(9_000)}`, { metadata: { note: 'm'.repeat(4_000) } });
      const body = { posts: Array.from({ length: 40 }, (_, i) => big(i)) };
      expect(Buffer.byteLength(JSON.stringify(body))).toBeGreaterThan(1_048_576);
      const res = await batch().send(body).expect(201);
      expect(res.body.created).toBe(40);
      await single()
        .send({ ...big(0), metadata: { note: 'm'.repeat(1_100_000) } })
        .expect(413);
      // Over 5 MB: 413 naming this route's limit, nothing created.
      const huge = `{"posts": [${JSON.stringify(ok(`Huge ${run}`, { metadata: { note: 'x'.repeat(5_300_000) } }))}]}`;
      await refused(huge, 413, /^The request body is larger than the 5 MB limit$/);
      expect(await postsWithText(`Huge ${run}`)).toBe(0);
    });

    it('text PostgreSQL cannot hold refuses the whole batch, naming the item', async () => {
      await refused({ posts: [ok('fine'), ok('nul \u0000 inside')] }, 400, /^posts\.1\.text contains a NUL character/);
    });
  });

  describe('Idempotency-Key for the whole batch', () => {
    it('the same key and body answer the first answer again, creating nothing twice; another body is 422', async () => {
      const key = `batch-${randomUUID()}`;
      const body = { posts: [ok(`Idem ${key} 1`), ok(`Idem ${key} 2`, { bogus: 1 }), ok(`Idem ${key} 3`)] };
      const first = await batch().set('Idempotency-Key', key).send(body).expect(207);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const before = await counts();
      const again = await batch().set('Idempotency-Key', key).send(body).expect(207);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
      expect(await counts()).toEqual(before);
      expect(await postsWithText(`Idem ${key}`)).toBe(2);
      // Keys of JSON objects in another order: the same body.
      const reordered = { posts: body.posts.map((p) => Object.fromEntries(Object.entries(p).reverse())) };
      await batch().set('Idempotency-Key', key).send(reordered).expect(207);
      // The failed item fixed, sent under the same key: another body.
      const fixed = { posts: [body.posts[0], ok(`Idem ${key} 2`), body.posts[2]] };
      await refused(fixed, 422, /different request body/, { 'Idempotency-Key': key });
      // The same key on POST /v1/posts is another request too.
      const res = await single().set('Idempotency-Key', key).send(body.posts[0]);
      expect(res.status).toBe(422);
      expect(await postsWithText(`Idem ${key}`)).toBe(2);
    });

    it('a batch that created nothing does not use its key up', async () => {
      const key = `nothing-${randomUUID()}`;
      const bad = { posts: [ok(`Nothing ${key}`, { bogus: 1 })] };
      const res = await batch().set('Idempotency-Key', key).send(bad).expect(207);
      expect(res.body.created).toBe(0);
      await batch()
        .set('Idempotency-Key', key)
        .send({ posts: [ok(`Nothing ${key}`)] })
        .expect(201);
      expect(await postsWithText(`Nothing ${key}`)).toBe(1);
    });

    it('a key still in flight is 409; a batch that died half-way is taken over without creating its created items again', async () => {
      const key = `died-${randomUUID()}`;
      // The third a draft: a post without jobs, which the test can delete to stage "not written yet".
      const body = {
        posts: [ok(`Died ${key} 1`), ok(`Died ${key} 2`), { text: `Died ${key} 3`, targets: [{ accountId: b }], status: 'draft' }],
      };
      const hash = canonicalHash(['POST /v1/posts/batch', body]);
      // The first run: it created every item, then "died" before storing its answer (the claim
      // left in flight, as a killed process leaves it).
      const first = await batch().set('Idempotency-Key', key).send(body).expect(201);
      await q(
        `UPDATE idempotency_keys SET state = 'in_flight', response_status = NULL, response_body = NULL WHERE workspace_id = $1 AND key = $2`,
        [ws, key],
      );
      // ... and its third item had not been written: its own key is gone, its post too.
      const third = (first.body.results as ItemResult[])[2].post!.id;
      await q(`DELETE FROM idempotency_keys WHERE workspace_id = $1 AND key LIKE 'batch‹%›#2' AND response_body->>'id' = $2`, [ws, third]);
      await q(`DELETE FROM posts WHERE id = $1`, [third]);
      expect(await postsWithText(`Died ${key}`)).toBe(2);

      await refused(body, 409, /still being processed/, { 'Idempotency-Key': key });
      expect(
        (
          await q<{ n: number }>(
            `SELECT count(*)::int AS n FROM idempotency_keys WHERE workspace_id = $1 AND key = $2 AND request_hash = $3`,
            [ws, key, hash],
          )
        )[0].n,
      ).toBe(1);
      // Two minutes later the claim counts as abandoned: the same body takes it over.
      await q(`UPDATE idempotency_keys SET created_at = now() - interval '3 minutes' WHERE workspace_id = $1 AND key = $2`, [ws, key]);
      const retry = await batch().set('Idempotency-Key', key).send(body).expect(201);
      const ids = (retry.body.results as ItemResult[]).map((r) => r.post!.id);
      const firstIds = (first.body.results as ItemResult[]).map((r) => r.post!.id);
      // The two items written before are answered again (the same posts), the third is created now.
      expect(ids.slice(0, 2)).toEqual(firstIds.slice(0, 2));
      expect(ids[2]).not.toBe(firstIds[2]);
      expect(await postsWithText(`Died ${key}`)).toBe(3);
      const replay = await batch().set('Idempotency-Key', key).send(body).expect(201);
      expect(replay.body).toEqual(retry.body);
    });

    it('a malformed key is 400', async () => {
      await refused({ posts: [ok('k')] }, 400, /^Idempotency-Key must be 1 to 255 characters$/, { 'Idempotency-Key': 'k'.repeat(256) });
    });
  });
});
