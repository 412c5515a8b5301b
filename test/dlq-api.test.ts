import { Client } from 'pg';
import { bootTestApp, scrapeMetrics, TestApp } from './support/app';
import { withClient } from './support/database';
import { killJobs, insertAccount, setAccountStatus } from './support/dlq';
import { createPost, createWebhookAccount } from './support/engine';
import { bearer } from './support/config';

/**
 * The dead-letter queue's API against a real app and database, worker off: jobs are made dead
 * by SQL the way the engine leaves them (test/support/dlq.ts), so every state seen here is the
 * DLQ's own doing. Delivery after a requeue is proven in dlq-engine.test.ts.
 */

interface DlqEntry {
  id: string;
  postId: string;
  accountId: string;
  provider: string;
  status: string;
  attemptCount: number;
  nextAttemptAt: string | null;
  idempotencyKey: string;
  errorClass: string | null;
  lastError: string | null;
  deadReason: string | null;
  deadAt: string | null;
  text: string;
  account: { id: string; name: string; status: string };
}

interface DlqDetail extends DlqEntry {
  payload: {
    text: string;
    title: string | null;
    link: string | null;
    media: string[];
    metadata: Record<string, unknown> | null;
    scheduledAt: string;
  };
  requeueIdempotencyKey: string;
  attempts: {
    number: number;
    httpStatus: number | null;
    errorClass: string;
    decision: string;
    responseExcerpt: string | null;
    latencyMs: number;
    idempotencyKey: string;
  }[];
  audit: {
    action: string;
    apiKeyId: string | null;
    actor: { kind: string; id: string | null; label: string };
    before: Record<string, unknown>;
    after: Record<string, unknown>;
    at: string;
  }[];
}

describe('dead-letter queue API', () => {
  let t: TestApp;
  let key: string;
  let keyId: string;
  let workspaceId: string;
  let webhook: string;
  let other: { key: string; account: string };

  const q = <T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> =>
    withClient(t.databaseUrl, async (db: Client) => (await db.query(text, params)).rows as T[]);

  const http = () => t.http();
  const detail = async (id: string, k = key): Promise<DlqDetail> => {
    const res = await http().get(`/v1/dlq/${id}`).set(bearer(k));
    expect(res.status).toBe(200);
    return res.body as DlqDetail;
  };

  /** One post to `accounts`, its jobs made dead; returns the job ids in the order of `accounts`. */
  async function deadJobs(
    accounts: string[],
    body: Record<string, unknown> = {},
    death: Parameters<typeof killJobs>[2] = {},
    k = key,
  ): Promise<string[]> {
    const post = await createPost(t, k, { text: 'A failed announcement', ...body, targets: accounts.map((accountId) => ({ accountId })) });
    const ids = accounts.map((a) => (post.jobs as unknown as { id: string; accountId: string }[]).find((j) => j.accountId === a)!.id);
    await killJobs(t.databaseUrl, ids, death);
    return ids;
  }

  /** The job row as the database holds it (to prove that a refused request changed nothing). */
  const row = async (id: string) =>
    (
      await q(
        `SELECT status, payload, idempotency_key, attempt_base, payload_changed_since_key, run_at, dead_reason FROM jobs WHERE id = $1`,
        [id],
      )
    )[0];
  /** The audit trail names the key that did it, by id and by name (never the key itself). */
  const keyActor = () => ({ kind: 'key', id: keyId, label: expect.stringMatching(/^key “dlq operator” \(hk_/) as unknown });
  const auditCount = async (id: string) =>
    (await q<{ n: number }>(`SELECT count(*)::int AS n FROM audit_events WHERE subject_id = $1 AND kind = 'failed_post'`, [id]))[0].n;

  beforeAll(async () => {
    t = await bootTestApp({ config: { allowPrivateUrls: true } });
    // A key of its own, so the audit trail's apiKeyId can be checked against it.
    const created = await http().post('/v1/api-keys').set(bearer(t.adminKey)).send({ name: 'dlq operator' }).expect(201);
    key = created.body.key;
    keyId = created.body.id;
    webhook = (await createWebhookAccount(t, key, 'http://127.0.0.1:9/hook')).id;
    workspaceId = (await q<{ w: string }>('SELECT workspace_id AS w FROM accounts WHERE id = $1', [webhook]))[0].w;
    const ws = await http().post('/v1/workspaces').set(bearer(t.adminKey)).send({ name: 'Other tenant' }).expect(201);
    const otherKey: string = ws.body.apiKey.key;
    other = { key: otherKey, account: (await createWebhookAccount(t, otherKey, 'http://127.0.0.1:9/other')).id };
  });
  afterAll(async () => {
    await t.close();
  });

  describe('GET /v1/dlq/:jobId', () => {
    it('shows the payload as it would be sent, every attempt, why it died, and the key a requeue would use', async () => {
      const [id] = await deadJobs(
        [webhook],
        { text: 'Launch day', title: 'Launch', link: 'https://example.com/launch', metadata: { slug: 'launch' } },
        {
          reason: 'permanent',
          lastError: 'HTTP 422: the receiver rejected the payload',
          httpStatus: 422,
          responseExcerpt: '{"error":"slug taken"}',
        },
      );
      const job = await detail(id);
      expect(job).toMatchObject({
        id,
        status: 'dead',
        deadReason: 'permanent',
        errorClass: 'permanent',
        lastError: 'HTTP 422: the receiver rejected the payload',
        attemptCount: 1,
        idempotencyKey: id,
        requeueIdempotencyKey: id,
        account: { id: webhook, status: 'active' },
        payload: { text: 'Launch day', title: 'Launch', link: 'https://example.com/launch', media: [], metadata: { slug: 'launch' } },
        audit: [],
      });
      expect(job.deadAt).toEqual(expect.any(String));
      expect(job.attempts).toEqual([
        expect.objectContaining({
          number: 1,
          httpStatus: 422,
          errorClass: 'permanent',
          decision: 'dead',
          responseExcerpt: '{"error":"slug taken"}',
          latencyMs: 12,
          idempotencyKey: id,
        }),
      ]);
    });
  });

  describe('GET /v1/dlq', () => {
    it('lists dead jobs newest first, filters them, and pages without skipping rows that died in the same instant', async () => {
      const acct = (await createWebhookAccount(t, key, 'http://127.0.0.1:9/list')).id;
      const acct2 = (await createWebhookAccount(t, key, 'http://127.0.0.1:9/list2')).id;
      const old = new Date(Date.now() - 3_600_000);
      const [a1] = await deadJobs(
        [acct],
        {},
        {
          at: old,
          reason: 'max_attempts',
          errorClass: 'transient',
          lastError: 'connection refused by 127.0.0.1:9 (ECONNREFUSED)',
          httpStatus: null,
        },
      );
      // Seven jobs of one post die in one statement: one death time to the microsecond.
      const posts = await Promise.all(
        Array.from({ length: 7 }, (_, i) => createPost(t, key, { text: `batch ${i}`, targets: [{ accountId: acct2 }] })),
      );
      const batch = posts.map((p) => p.jobs[0].id);
      await killJobs(t.databaseUrl, batch, { lastError: 'HTTP 400: the receiver rejected the payload (100% wrong_field)' });
      // Paused, scheduled and other accounts' jobs are not in the DLQ.
      await createPost(t, key, { text: 'waiting', targets: [{ accountId: acct2 }] });

      const page = async (query: string) => {
        const res = await http().get(`/v1/dlq?${query}`).set(bearer(key));
        expect(res.status).toBe(200);
        return res.body as { data: DlqEntry[]; nextCursor: string | null };
      };
      const byAccount = await page(`accountId=${acct2}`);
      expect(byAccount.data.map((j) => j.id).sort()).toEqual([...batch].sort());
      expect(byAccount.nextCursor).toBeNull();

      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const p = await page(`accountId=${acct2}&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
        expect(p.data.length).toBeLessThanOrEqual(3);
        seen.push(...p.data.map((j) => j.id));
        cursor = p.nextCursor;
      } while (cursor);
      expect(seen).toEqual(byAccount.data.map((j) => j.id));

      // Newest first: the batch before the job that died an hour ago.
      const both = await page(`provider=webhook&from=${encodeURIComponent(new Date(Date.now() - 7_200_000).toISOString())}`);
      const ids = both.data.map((j) => j.id);
      expect(ids.indexOf(a1)).toBeGreaterThan(Math.max(...batch.map((b) => ids.indexOf(b))));
      for (let i = 1; i < both.data.length; i++)
        expect(Date.parse(both.data[i - 1].deadAt!)).toBeGreaterThanOrEqual(Date.parse(both.data[i].deadAt!));

      expect((await page(`errorClass=transient&accountId=${acct}`)).data.map((j) => j.id)).toEqual([a1]);
      expect((await page(`deadReason=max_attempts&accountId=${acct}`)).data.map((j) => j.id)).toEqual([a1]);
      expect(
        (await page(`to=${encodeURIComponent(new Date(Date.now() - 1_800_000).toISOString())}&accountId=${acct}`)).data.map((j) => j.id),
      ).toEqual([a1]);
      expect((await page(`from=${encodeURIComponent(new Date(Date.now() - 1_800_000).toISOString())}&accountId=${acct}`)).data).toEqual([]);
      // Text search in the last error: case-insensitive, and % _ are plain characters.
      expect((await page('q=econnrefused')).data.map((j) => j.id)).toEqual([a1]);
      expect((await page('q=100%25%20WRONG_field')).data.map((j) => j.id).sort()).toEqual([...batch].sort());
      expect((await page('q=100%25%20WRONGxfield')).data).toEqual([]);

      for (const bad of [
        'provider=myspace',
        'errorClass=oops',
        'deadReason=tired',
        'from=yesterday',
        'accountId=42',
        'limit=500',
        'cursor=nope',
        'status=scheduled',
        'colour=red',
      ]) {
        const res = await http().get(`/v1/dlq?${bad}`).set(bearer(key));
        expect({ bad, status: res.status }).toEqual({ bad, status: 400 });
        expect(res.body.message).toMatch(new RegExp(bad.split('=')[0]));
      }
    });
  });

  describe('PATCH /v1/dlq/:jobId', () => {
    it("edits that job's payload only, keeps an audit trail of who changed what, and announces a new key", async () => {
      const second = (await createWebhookAccount(t, key, 'http://127.0.0.1:9/second')).id;
      const [id, sibling] = await deadJobs([webhook, second], { text: 'Typo in teh text', title: 'Old title', metadata: { a: 1 } });
      const res = await http()
        .patch(`/v1/dlq/${id}`)
        .set(bearer(key))
        .send({ text: 'Typo fixed in the text', title: null, link: 'https://example.com/fixed', metadata: { a: 1 } });
      expect(res.status).toBe(200);
      const job = res.body as DlqDetail;
      expect(job.payload).toMatchObject({
        text: 'Typo fixed in the text',
        title: null,
        link: 'https://example.com/fixed',
        metadata: { a: 1 },
      });
      expect(job.text).toBe('Typo fixed in the text');
      expect(job.status).toBe('dead');
      expect(job.idempotencyKey).toBe(id);
      expect(job.requeueIdempotencyKey).toBe(`${id}.2`);
      // Only what changed is in the trail (metadata was sent unchanged).
      expect(job.audit).toEqual([
        {
          action: 'edit',
          apiKeyId: keyId,
          actor: keyActor(),
          before: { text: 'Typo in teh text', title: 'Old title', link: null },
          after: { text: 'Typo fixed in the text', title: null, link: 'https://example.com/fixed' },
          at: expect.any(String),
        },
      ]);
      // The post's other job keeps its payload.
      expect((await detail(sibling)).payload).toMatchObject({ text: 'Typo in teh text', title: 'Old title', link: null });

      // A second edit is a second trail entry; the announced key stays .2 (nothing sent yet).
      const again = (
        await http()
          .patch(`/v1/dlq/${id}`)
          .set(bearer(key))
          .send({ metadata: { a: 2 } })
          .expect(200)
      ).body as DlqDetail;
      expect(again.audit.map((a) => a.action)).toEqual(['edit', 'edit']);
      expect(again.audit[1]).toMatchObject({ before: { metadata: { a: 1 } }, after: { metadata: { a: 2 } } });
      expect(again.requeueIdempotencyKey).toBe(`${id}.2`);
    });

    it('refuses an edit that POST /v1/posts would refuse for that platform, naming the rule, and changes nothing', async () => {
      const sky = await insertAccount(t.databaseUrl, workspaceId, 'bluesky', 'Sky');
      const li = await insertAccount(t.databaseUrl, workspaceId, 'linkedin', 'In');
      const [skyJob, liJob, hookJob] = await deadJobs([sky, li, webhook], { text: 'Short and fine' });

      const refuse = async (id: string, body: unknown, message: RegExp) => {
        const before = await row(id);
        const trail = await auditCount(id);
        const res = await http()
          .patch(`/v1/dlq/${id}`)
          .set(bearer(key))
          .send(body as object);
        expect({ status: res.status, body: res.body }).toEqual({
          status: 400,
          body: { statusCode: 400, error: 'Bad Request', message: expect.any(String) },
        });
        expect(res.body.message).toMatch(message);
        expect(await row(id)).toEqual(before);
        expect(await auditCount(id)).toBe(trail);
      };
      // Bluesky counts graphemes (300 accented letters are fine) and caps bytes too: 130 family
      // emoji are 130 graphemes but 3,250 bytes.
      await http()
        .patch(`/v1/dlq/${skyJob}`)
        .set(bearer(key))
        .send({ text: 'e\u0301'.repeat(300) })
        .expect(200);
      await refuse(skyJob, { text: '👨‍👩‍👧‍👦'.repeat(130) }, /bluesky: text is 3250 bytes in UTF-8, the limit is 3000/);
      await refuse(skyJob, { text: 'x'.repeat(301) }, /bluesky: text is 301 graphemes, the limit is 300/);
      await refuse(liJob, { text: 'y'.repeat(3001) }, /linkedin: text is 3001 characters, the limit is 3000/);
      // The same text is fine for a webhook (10,000), and the DTO's own rules still apply.
      await http()
        .patch(`/v1/dlq/${hookJob}`)
        .set(bearer(key))
        .send({ text: 'x'.repeat(301) })
        .expect(200);
      await refuse(hookJob, { text: 'x'.repeat(10_001) }, /text must be shorter than or equal to 10000 characters/);
      await refuse(hookJob, { text: '' }, /text should not be empty/);
      await refuse(hookJob, { text: null }, /text cannot be null/);
      await refuse(hookJob, { text: 42 }, /text must be a string/);
      await refuse(hookJob, { link: 'ftp://example.com/x' }, /link must be an absolute http\(s\) URL/);
      await refuse(hookJob, { title: 'x'.repeat(301) }, /title must be shorter than or equal to 300 characters/);
      await refuse(hookJob, { metadata: [1, 2] }, /metadata must be an object/);
      await refuse(hookJob, { metadata: { blob: 'x'.repeat(17_000) } }, /metadata must be at most 16 KB/);
      await refuse(hookJob, { media: ['not-a-uuid'] }, /media must contain media ids/);
      await refuse(
        hookJob,
        { media: ['6d1f3c52-6d4c-4a55-8e3b-0d2b1c7e9a10'] },
        /media: unknown media id 6d1f3c52-6d4c-4a55-8e3b-0d2b1c7e9a10/,
      );
      await refuse(hookJob, { media: null }, /media cannot be null/);
      await refuse(hookJob, { scheduledAt: '2030-01-01T00:00:00Z' }, /scheduledAt is not allowed \(unknown field\)/);
      await refuse(hookJob, { targets: [] }, /targets is not allowed/);
      await refuse(hookJob, {}, /nothing to edit/);
    });

    it('answers 409 for a job that is not dead, and an unchanged payload is not an edit', async () => {
      const post = await createPost(t, key, { text: 'still waiting', targets: [{ accountId: webhook }] });
      const res = await http().patch(`/v1/dlq/${post.jobs[0].id}`).set(bearer(key)).send({ text: 'new' });
      expect(res.status).toBe(409);
      expect(res.body.message).toMatch(/only a dead job's payload can be edited.*scheduled/);

      const [id] = await deadJobs([webhook], { text: 'same' });
      const same = (await http().patch(`/v1/dlq/${id}`).set(bearer(key)).send({ text: 'same' }).expect(200)).body as DlqDetail;
      expect(same.audit).toEqual([]);
      expect(same.requeueIdempotencyKey).toBe(id);
    });
  });

  describe('POST /v1/dlq/:jobId/requeue', () => {
    it('gives a fresh attempt budget and keeps history and key when the payload was not edited', async () => {
      const [id] = await deadJobs([webhook]);
      const res = await http().post(`/v1/dlq/${id}/requeue`).set(bearer(key)).send({});
      expect(res.status).toBe(200);
      const job = res.body as DlqDetail;
      expect(job).toMatchObject({ status: 'scheduled', deadReason: null, idempotencyKey: id, attemptCount: 1, errorClass: 'permanent' });
      expect(job.attempts).toHaveLength(1);
      expect(Date.parse(job.nextAttemptAt!)).toBeLessThanOrEqual(Date.now() + 1000);
      expect(await row(id)).toMatchObject({ attempt_base: 1, payload_changed_since_key: false });
      expect(job.audit).toEqual([
        {
          action: 'requeue',
          apiKeyId: keyId,
          actor: keyActor(),
          before: expect.objectContaining({ status: 'dead', idempotencyKey: id }),
          after: expect.objectContaining({ status: 'scheduled', idempotencyKey: id, force: false }),
          at: expect.any(String),
        },
      ]);

      // No longer dead: a second requeue is refused and changes nothing.
      const again = await http().post(`/v1/dlq/${id}/requeue`).set(bearer(key)).send({});
      expect(again.status).toBe(409);
      expect(again.body.message).toMatch(/no longer in the dead-letter queue \(it is scheduled\).*nothing was changed/);
    });

    it('issues <jobId>.2, then .3, after edits, and honours runAt', async () => {
      const [id] = await deadJobs([webhook]);
      await http().patch(`/v1/dlq/${id}`).set(bearer(key)).send({ text: 'edited once' }).expect(200);
      const runAt = '2031-05-01T10:00:00+02:00';
      const first = (await http().post(`/v1/dlq/${id}/requeue`).set(bearer(key)).send({ runAt }).expect(200)).body as DlqDetail;
      expect(first.idempotencyKey).toBe(`${id}.2`);
      expect(first.nextAttemptAt).toBe('2031-05-01T08:00:00.000Z');
      // Dead again after a failed attempt with the new key; requeued without an edit: same key.
      await killJobs(t.databaseUrl, [id]);
      expect((await detail(id)).requeueIdempotencyKey).toBe(`${id}.2`);
      expect((await http().post(`/v1/dlq/${id}/requeue`).set(bearer(key)).send({}).expect(200)).body.idempotencyKey).toBe(`${id}.2`);
      await killJobs(t.databaseUrl, [id]);
      await http().patch(`/v1/dlq/${id}`).set(bearer(key)).send({ text: 'edited twice' }).expect(200);
      expect((await http().post(`/v1/dlq/${id}/requeue`).set(bearer(key)).send({}).expect(200)).body.idempotencyKey).toBe(`${id}.3`);

      for (const body of [{ runAt: 'tomorrow' }, { runAt: '2031-02-30T10:00:00Z' }, { force: 'yes' }, { ids: [id] }]) {
        await killJobs(t.databaseUrl, [id]);
        const bad = await http().post(`/v1/dlq/${id}/requeue`).set(bearer(key)).send(body);
        expect(bad.status).toBe(400);
        expect((await row(id)).status).toBe('dead');
      }
    });

    it('the manual retry (POST /v1/jobs/:id/retry) also sends an edited dead job under a new key', async () => {
      const [id] = await deadJobs([webhook]);
      await http().patch(`/v1/dlq/${id}`).set(bearer(key)).send({ text: 'edited, then retried' }).expect(200);
      const res = await http().post(`/v1/jobs/${id}/retry`).set(bearer(key)).expect(200);
      expect(res.body).toMatchObject({ status: 'scheduled', idempotencyKey: `${id}.2` });
    });

    it('the manual retry of a dead job leaves the same audit record as a requeue: who, what, when', async () => {
      const [id] = await deadJobs([webhook]);
      await http().post(`/v1/jobs/${id}/retry`).set(bearer(key)).expect(200);
      const entry = {
        action: 'requeue',
        apiKeyId: keyId,
        actor: keyActor(),
        before: expect.objectContaining({ status: 'dead', idempotencyKey: id }),
        after: expect.objectContaining({ status: 'scheduled', idempotencyKey: id, force: true, via: 'retry' }),
        at: expect.any(String),
      };
      expect((await detail(id)).audit).toEqual([entry]);
      // A retry of a waiting job (it only becomes due now) is not a requeue and leaves no record.
      await http().post(`/v1/jobs/${id}/retry`).set(bearer(key)).expect(200);
      expect((await detail(id)).audit).toEqual([entry]);
    });

    it('refuses with 409 saying what to fix while the account needs re-auth or is disabled, unless forced (then paused)', async () => {
      const acct = (await createWebhookAccount(t, key, 'http://127.0.0.1:9/reauth')).id;
      const [a, b, c] = await Promise.all([0, 1, 2].map(() => deadJobs([acct]).then((x) => x[0])));

      await setAccountStatus(t.databaseUrl, acct, 'needs_reauth', 'the receiver refused the credentials (HTTP 401)');
      const refused = await http().post(`/v1/dlq/${a}/requeue`).set(bearer(key)).send({});
      expect(refused.status).toBe(409);
      expect(refused.body.message).toMatch(/needs re-authentication \(the receiver refused the credentials \(HTTP 401\)\)/);
      expect(refused.body.message).toContain(`PATCH /v1/accounts/${acct}`);
      expect(refused.body.message).toContain('"force": true');
      expect((await row(a)).status).toBe('dead');

      const forced = (await http().post(`/v1/dlq/${a}/requeue`).set(bearer(key)).send({ force: true }).expect(200)).body as DlqDetail;
      expect(forced.status).toBe('paused');

      await setAccountStatus(t.databaseUrl, acct, 'disabled', '50 consecutive failures');
      const disabled = await http().post(`/v1/dlq/${b}/requeue`).set(bearer(key)).send({});
      expect(disabled.status).toBe(409);
      expect(disabled.body.message).toMatch(
        /is disabled \(50 consecutive failures\): enable it first: PATCH \/v1\/accounts\/.* \{ "status": "active" \}/,
      );

      // Bulk: skipped and reported, not refused as a whole.
      const bulk = (
        await http()
          .post('/v1/dlq/requeue')
          .set(bearer(key))
          .send({ ids: [b, c] })
          .expect(200)
      ).body;
      expect(bulk).toMatchObject({
        requeued: 0,
        skipped: [expect.objectContaining({ reason: 'account_not_active' }), expect.objectContaining({ reason: 'account_not_active' })],
      });

      // Fixing the account resumes the forced (paused) job, as any paused job.
      await http().patch(`/v1/accounts/${acct}`).set(bearer(key)).send({ status: 'active' }).expect(200);
      expect((await detail(a)).status).toBe('scheduled');

      // A deleted account: never, even forced.
      await http().delete(`/v1/accounts/${acct}`).set(bearer(key)).expect(204);
      const gone = await http().post(`/v1/dlq/${b}/requeue`).set(bearer(key)).send({ force: true });
      expect(gone.status).toBe(409);
      expect(gone.body.message).toMatch(/was deleted.*discard it/);
    });

    it('two simultaneous requeues of one job: one succeeds, the others are refused, the job is queued once', async () => {
      const [id] = await deadJobs([webhook]);
      const answers = await Promise.all(Array.from({ length: 8 }, () => http().post(`/v1/dlq/${id}/requeue`).set(bearer(key)).send({})));
      expect(answers.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
      const trail = await q<{ action: string }>(`SELECT action FROM audit_events WHERE subject_id = $1 AND kind = 'failed_post'`, [id]);
      expect(trail).toEqual([{ action: 'requeue' }]);
    });
  });

  describe('POST /v1/dlq/requeue (bulk)', () => {
    it('requeues by ids in one transaction and reports jobs that are not dead; unknown ids change nothing', async () => {
      const acct = (await createWebhookAccount(t, key, 'http://127.0.0.1:9/bulk')).id;
      const dead = await Promise.all([0, 1, 2].map(() => deadJobs([acct]).then((x) => x[0])));
      const waiting = (await createPost(t, key, { text: 'not dead', targets: [{ accountId: acct }] })).jobs[0].id;
      const foreign = (await deadJobs([other.account], {}, {}, other.key))[0];

      for (const ids of [
        [...dead, foreign],
        [...dead, '6d1f3c52-6d4c-4a55-8e3b-0d2b1c7e9a10'],
      ]) {
        const res = await http().post('/v1/dlq/requeue').set(bearer(key)).send({ ids });
        expect(res.status).toBe(400);
        expect(res.body.message).toMatch(/ids: unknown job/);
        for (const id of dead) expect((await row(id)).status).toBe('dead');
      }
      expect((await row(foreign)).status).toBe('dead');

      const res = await http()
        .post('/v1/dlq/requeue')
        .set(bearer(key))
        .send({ ids: [...dead, waiting] })
        .expect(200);
      expect(res.body).toEqual({
        requeued: 3,
        ids: expect.arrayContaining(dead),
        skipped: [{ id: waiting, reason: 'not_dead', message: expect.stringMatching(/it is scheduled/) }],
        more: false,
      });
      // Again: every one is a reported no-op.
      const again = await http().post('/v1/dlq/requeue').set(bearer(key)).send({ ids: dead }).expect(200);
      expect(again.body.requeued).toBe(0);
      expect(again.body.skipped.map((s: { reason: string }) => s.reason)).toEqual(['not_dead', 'not_dead', 'not_dead']);

      for (const body of [
        {},
        { ids: dead, filter: {} },
        { ids: [] },
        { ids: ['x'] },
        { filter: { provider: 'fax' } },
        { filter: { colour: 'red' } },
      ]) {
        expect((await http().post('/v1/dlq/requeue').set(bearer(key)).send(body)).status).toBe(400);
      }
    });

    it('requeues by filter exactly the matching dead jobs of the workspace', async () => {
      const acct = (await createWebhookAccount(t, key, 'http://127.0.0.1:9/filter')).id;
      const match = await deadJobs([acct], {}, { lastError: 'HTTP 400: the receiver rejected the payload' });
      const noMatch = await deadJobs([acct], {}, { lastError: 'HTTP 404: the endpoint was not found' });
      const foreign = await deadJobs([other.account], {}, { lastError: 'HTTP 400: the receiver rejected the payload' }, other.key);
      const res = await http()
        .post('/v1/dlq/requeue')
        .set(bearer(key))
        .send({ filter: { accountId: acct, q: 'HTTP 400' } })
        .expect(200);
      expect(res.body).toEqual({ requeued: 1, ids: match, skipped: [], more: false });
      expect((await row(noMatch[0])).status).toBe('dead');
      expect((await row(foreign[0])).status).toBe('dead');
    });
  });

  describe('DELETE /v1/dlq/:jobId', () => {
    it('discards: kept with its history and dead reason, out of the default list, in ?status=discarded', async () => {
      const acct = (await createWebhookAccount(t, key, 'http://127.0.0.1:9/discard')).id;
      const [id, kept] = await Promise.all(
        [0, 1].map(() => deadJobs([acct], {}, { reason: 'poison', errorClass: 'poison' }).then((x) => x[0])),
      );
      const res = await http().delete(`/v1/dlq/${id}`).set(bearer(key)).expect(200);
      expect(res.body).toMatchObject({ id, status: 'discarded', deadReason: 'poison', attempts: [expect.objectContaining({ number: 1 })] });
      expect(res.body.audit).toEqual([
        {
          action: 'discard',
          apiKeyId: keyId,
          actor: keyActor(),
          before: { status: 'dead' },
          after: { status: 'discarded' },
          at: expect.any(String),
        },
      ]);
      // Discarding again is a no-op.
      expect((await http().delete(`/v1/dlq/${id}`).set(bearer(key)).expect(200)).body.audit).toHaveLength(1);

      const list = async (query: string) =>
        ((await http().get(`/v1/dlq?accountId=${acct}&${query}`).set(bearer(key)).expect(200)).body.data as DlqEntry[]).map((j) => j.id);
      expect(await list('')).toEqual([kept]);
      expect(await list('status=discarded')).toEqual([id]);
      expect((await list('includeDiscarded=true')).sort()).toEqual([id, kept].sort());

      expect((await http().post(`/v1/dlq/${id}/requeue`).set(bearer(key)).send({})).status).toBe(409);
      expect((await http().post(`/v1/jobs/${id}/retry`).set(bearer(key))).status).toBe(409);
      const post = await createPost(t, key, { text: 'waiting', targets: [{ accountId: acct }] });
      expect((await http().delete(`/v1/dlq/${post.jobs[0].id}`).set(bearer(key))).status).toBe(409);
    });
  });

  it("answers 404 for another workspace's job ids everywhere, and never lists them", async () => {
    const [foreign] = await deadJobs([other.account], {}, {}, other.key);
    const before = await row(foreign);
    const calls = [
      http().get(`/v1/dlq/${foreign}`).set(bearer(key)),
      http().patch(`/v1/dlq/${foreign}`).set(bearer(key)).send({ text: 'hijacked' }),
      http().post(`/v1/dlq/${foreign}/requeue`).set(bearer(key)).send({ force: true }),
      http().delete(`/v1/dlq/${foreign}`).set(bearer(key)),
      http().get('/v1/dlq/not-a-uuid').set(bearer(key)),
    ];
    for (const res of await Promise.all(calls)) {
      expect(res.status).toBe(404);
      expect(res.body.message).toMatch(/^job ".*" was not found$/);
    }
    expect(await row(foreign)).toEqual(before);
    const mine = (await http().get('/v1/dlq?limit=200&includeDiscarded=true').set(bearer(key)).expect(200)).body.data as DlqEntry[];
    expect(mine.map((j) => j.id)).not.toContain(foreign);
    expect((await http().get(`/v1/dlq?accountId=${other.account}`).set(bearer(key)).expect(200)).body.data).toEqual([]);
    // The owner sees it.
    expect((await detail(foreign, other.key)).status).toBe('dead');
  });

  it('exports requeued and discarded counts and the DLQ size by provider and reason in /metrics', async () => {
    const acct = (await createWebhookAccount(t, key, 'http://127.0.0.1:9/metrics')).id;
    const metric = async (name: string, labels = '') => {
      const text = await scrapeMetrics(t);
      expect(text).not.toContain(acct); // ids are never labels
      const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
      return line === undefined ? null : Number(line.split(' ').pop());
    };
    const size = () => metric('herald_dlq_size', '{provider="webhook",reason="permanent"}');
    const [before, requeuedBefore, discardedBefore] = [
      await size(),
      await metric('herald_dlq_requeued_total'),
      await metric('herald_dlq_discarded_total'),
    ];
    const [a, b, c] = await Promise.all([0, 1, 2].map(() => deadJobs([acct]).then((x) => x[0])));
    expect(await size()).toBe(before! + 3);
    await http().post(`/v1/dlq/${a}/requeue`).set(bearer(key)).send({}).expect(200);
    await http().delete(`/v1/dlq/${b}`).set(bearer(key)).expect(200);
    expect(await size()).toBe(before! + 1);
    expect(await metric('herald_dlq_requeued_total')).toBe(requeuedBefore! + 1);
    expect(await metric('herald_dlq_discarded_total')).toBe(discardedBefore! + 1);
    await http()
      .post('/v1/dlq/requeue')
      .set(bearer(key))
      .send({ ids: [c] })
      .expect(200);
    expect(await metric('herald_dlq_requeued_total')).toBe(requeuedBefore! + 2);
    expect(await size()).toBe(before);
    // Every provider × reason is present, 0 included: 16 series (4 × 4) whatever the number of tenants.
    expect((await scrapeMetrics(t)).split('\n').filter((l) => l.startsWith('herald_dlq_size{'))).toHaveLength(16);
  });
});
