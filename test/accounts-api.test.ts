import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { bootTestApp, TestApp } from './support/app';
import { withClient } from './support/database';
import { bootEngine, createPost, createWebhookAccount, waitForJob } from './support/engine';
import { Receiver, startReceiver, verifySignature } from './support/receiver';
import { bearer } from './support/config';

/** /v1/accounts against a real app and database (docs/api.md). */

const FUTURE = '2030-01-01T09:00:00Z';
const HEADER_VALUE = 'tok-super-secret-header-value-42';

const query = <T = Record<string, unknown>>(url: string, text: string, params: unknown[] = []): Promise<T[]> =>
  withClient(url, async (db: Client) => (await db.query(text, params)).rows as T[]);

async function newWorkspace(t: TestApp, name: string): Promise<{ id: string; key: string }> {
  const res = await t.http().post('/v1/workspaces').set(bearer(t.adminKey)).send({ name }).expect(201);
  return { id: res.body.workspace.id, key: res.body.apiKey.key };
}

describe('accounts API', () => {
  let t: TestApp;
  let receiver: Receiver;
  const q = <T = Record<string, unknown>>(text: string, params: unknown[] = []) => query<T>(t.databaseUrl, text, params);
  const accountCount = async () => (await q<{ n: number }>('SELECT count(*)::int AS n FROM accounts'))[0].n;
  const create = (body: unknown, key = t.adminKey) =>
    t
      .http()
      .post('/v1/accounts')
      .set(bearer(key))
      .send(body as object);

  beforeAll(async () => {
    t = await bootTestApp({ config: { allowPrivateUrls: true } });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  describe('POST /v1/accounts (webhook)', () => {
    it('answers 201 with the account and its signing secret, once; the secret is never shown again', async () => {
      const url = receiver.urlFor('/hooks/blog');
      const res = await create({
        provider: 'webhook',
        name: 'Company blog',
        config: { url, headers: { 'X-Blog-Token': HEADER_VALUE } },
      }).expect(201);
      const acc = res.body;
      expect(acc).toMatchObject({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        provider: 'webhook',
        name: 'Company blog',
        status: 'active',
        config: { url, headerNames: ['X-Blog-Token'] },
        circuit: { state: 'closed', openUntil: null, consecutiveFailures: 0 },
        lastError: null,
        lastSuccessAt: null,
        createdAt: expect.any(String),
      });
      expect(Object.keys(acc.config).sort()).toEqual(['headerNames', 'url']);
      expect(Math.abs(Date.parse(acc.createdAt) - Date.now())).toBeLessThan(60_000);
      const secret: string = acc.secret;
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{20,}$/);
      const bare = secret.slice('whsec_'.length);
      expect(JSON.stringify(acc)).not.toContain(HEADER_VALUE);

      const got = await t.http().get(`/v1/accounts/${acc.id}`).set(bearer(t.adminKey)).expect(200);
      const { secret: _omit, ...withoutSecret } = acc;
      expect(got.body).toEqual(withoutSecret);
      const list = await t.http().get('/v1/accounts?limit=200').set(bearer(t.adminKey)).expect(200);
      expect(list.body.data.map((a: { id: string }) => a.id)).toContain(acc.id);
      for (const text of [JSON.stringify(got.body), JSON.stringify(list.body)]) {
        expect(text).not.toContain(bare);
        expect(text).not.toContain(HEADER_VALUE);
        expect(text).not.toMatch(/whsec_/);
        expect(text).not.toMatch(/credentials/);
      }

      // At rest: sealed, neither the secret nor the header value in clear.
      const [row] = await q<{ credentials: string; config: unknown }>('SELECT credentials, config FROM accounts WHERE id = $1', [acc.id]);
      expect(row.credentials.length).toBeGreaterThan(20);
      for (const plain of [secret, bare, HEADER_VALUE, Buffer.from(HEADER_VALUE).toString('base64')]) {
        expect(row.credentials).not.toContain(plain);
      }
      expect(JSON.stringify(row.config)).not.toContain(HEADER_VALUE);
      expect(row.config).toEqual({ url, headerNames: ['X-Blog-Token'] });
    });

    it('each account gets its own secret', async () => {
      const one = await createWebhookAccount(t, t.adminKey, receiver.urlFor('/one'));
      const two = await createWebhookAccount(t, t.adminKey, receiver.urlFor('/two'));
      expect(one.secret).toMatch(/^whsec_/);
      expect(two.secret).toMatch(/^whsec_/);
      expect(one.secret).not.toBe(two.secret);
    });

    it.each<[string, Record<string, unknown>, RegExp | string]>([
      [
        'an unknown provider',
        { provider: 'threads', name: 'T', config: { url: 'https://example.com' } },
        /^provider must be one of the following values: bluesky, linkedin, mastodon, webhook/,
      ],
      ['a missing url', { provider: 'webhook', name: 'W', config: {} }, 'config.url must be an absolute http(s) URL (it is required)'],
      [
        'a non-http url',
        { provider: 'webhook', name: 'W', config: { url: 'ftp://example.com/hook' } },
        'config.url must be an absolute http(s) URL',
      ],
      ['a relative url', { provider: 'webhook', name: 'W', config: { url: '/hook' } }, 'config.url must be an absolute http(s) URL'],
      [
        'an unknown config field',
        { provider: 'webhook', name: 'W', config: { url: 'http://127.0.0.1:9/x', secret: 'whsec_mine' } },
        /^config has unknown field\(s\) "secret"/,
      ],
      [
        'a reserved header',
        { provider: 'webhook', name: 'W', config: { url: 'http://127.0.0.1:9/x', headers: { 'Webhook-Signature': 'v1,forged' } } },
        'config.headers: "Webhook-Signature" is set by Herald and cannot be overridden',
      ],
      [
        'a reserved header in another case',
        { provider: 'webhook', name: 'W', config: { url: 'http://127.0.0.1:9/x', headers: { 'idempotency-KEY': 'k' } } },
        /"idempotency-KEY" is set by Herald/,
      ],
      [
        'a header value that is not a string',
        { provider: 'webhook', name: 'W', config: { url: 'http://127.0.0.1:9/x', headers: { 'X-A': 1 } } },
        'config.headers["X-A"] must be a string',
      ],
      ['config that is not an object', { provider: 'webhook', name: 'W', config: 'http://127.0.0.1:9/x' }, /^config must be an object/],
      ['a missing name', { provider: 'webhook', config: { url: 'http://127.0.0.1:9/x' } }, /^name must be a string/],
      [
        'an unknown top-level field',
        { provider: 'webhook', name: 'W', config: { url: 'http://127.0.0.1:9/x' }, owner: 'me' },
        'owner is not allowed (unknown field)',
      ],
      [
        'a bad retryPolicy',
        { provider: 'webhook', name: 'W', config: { url: 'http://127.0.0.1:9/x' }, retryPolicy: { baseDelayMs: 5000, maxDelayMs: 1000 } },
        /retryPolicy\.maxDelayMs \(1000\) must be at least retryPolicy\.baseDelayMs \(5000\)/,
      ],
      [
        'a bluesky config without an app password',
        { provider: 'bluesky', name: 'B', config: { identifier: 'me.bsky.social' } },
        'config.appPassword is required (a non-empty string)',
      ],
      [
        'a bluesky service that is not a URL',
        {
          provider: 'bluesky',
          name: 'B',
          config: { identifier: 'me.bsky.social', appPassword: 'abcd-efgh-ijkl-mnop', service: 'bsky.social' },
        },
        'config.service must be an absolute http(s) URL, e.g. https://bsky.social',
      ],
      [
        'a linkedin author that is not a URN',
        { provider: 'linkedin', name: 'L', config: { accessToken: 'AQV-token-value', authorUrn: 'me' } },
        /^config\.authorUrn must be urn:li:person:\{id\}/,
      ],
      [
        'a linkedin config without a token',
        { provider: 'linkedin', name: 'L', config: { authorUrn: 'urn:li:person:1' } },
        'config.accessToken is required',
      ],
    ])('rejects %s with a 400 naming it, and writes nothing', async (_, body, message) => {
      const before = await accountCount();
      const res = await create(body);
      expect({ status: res.status, body: res.body }).toEqual({
        status: 400,
        body: { statusCode: 400, error: 'Bad Request', message: expect.any(String) },
      });
      if (typeof message === 'string') expect(res.body.message).toBe(message);
      else expect(res.body.message).toMatch(message);
      // Secrets from the request never come back in the error.
      for (const secret of ['abcd-efgh-ijkl-mnop', 'AQV-token-value', 'v1,forged', 'whsec_mine'])
        expect(res.body.message).not.toContain(secret);
      expect(await accountCount()).toBe(before);
    });
  });

  describe('private destinations with HERALD_ALLOW_PRIVATE_URLS=false', () => {
    let strict: TestApp;
    beforeAll(async () => {
      strict = await bootTestApp({ config: { allowPrivateUrls: false } });
    });
    afterAll(async () => {
      await strict.close();
    });

    it.each([
      ['loopback', 'http://127.0.0.1:8080/hook'],
      ['private 10/8', 'http://10.1.2.3/hook'],
      ['cloud metadata', 'http://169.254.169.254/latest/meta-data/'],
      ['IPv6 loopback', 'http://[::1]/hook'],
      ['IPv4-mapped IPv6 loopback', 'http://[::ffff:127.0.0.1]/hook'],
    ])('refuses a %s URL at save time, naming the setting', async (_, url) => {
      const count = async () => (await query<{ n: number }>(strict.databaseUrl, 'SELECT count(*)::int AS n FROM accounts'))[0].n;
      const before = await count();
      const res = await strict
        .http()
        .post('/v1/accounts')
        .set(bearer(strict.adminKey))
        .send({ provider: 'webhook', name: 'LAN', config: { url } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: expect.stringContaining('HERALD_ALLOW_PRIVATE_URLS') });
      expect(res.body.message).toMatch(/^config\.url /);
      expect(await count()).toBe(before);
    });

    it('refuses a PATCH to a private URL and keeps the old one', async () => {
      // A public IP literal: no DNS needed.
      const res = await strict
        .http()
        .post('/v1/accounts')
        .set(bearer(strict.adminKey))
        .send({ provider: 'webhook', name: 'Public', config: { url: 'http://93.184.215.14/hook' } })
        .expect(201);
      const patch = await strict
        .http()
        .patch(`/v1/accounts/${res.body.id}`)
        .set(bearer(strict.adminKey))
        .send({ config: { url: 'http://10.0.0.1/hook' } });
      expect(patch.status).toBe(400);
      expect(patch.body.message).toContain('HERALD_ALLOW_PRIVATE_URLS');
      const got = await strict.http().get(`/v1/accounts/${res.body.id}`).set(bearer(strict.adminKey)).expect(200);
      expect(got.body.config.url).toBe('http://93.184.215.14/hook');
    });
  });

  describe('PATCH /v1/accounts/:id', () => {
    it('renames', async () => {
      const acc = await createWebhookAccount(t, t.adminKey, receiver.urlFor('/rename'));
      const res = await t.http().patch(`/v1/accounts/${acc.id}`).set(bearer(t.adminKey)).send({ name: 'Renamed blog' }).expect(200);
      expect(res.body).toMatchObject({ id: acc.id, name: 'Renamed blog', status: 'active' });
      expect(res.body.secret).toBeUndefined();
      expect(await q('SELECT name FROM accounts WHERE id = $1', [acc.id])).toEqual([{ name: 'Renamed blog' }]);
      const bad = await t.http().patch(`/v1/accounts/${acc.id}`).set(bearer(t.adminKey)).send({ name: '' }).expect(400);
      expect(bad.body.message).toMatch(/^name should not be empty/);
      const bad2 = await t.http().patch(`/v1/accounts/${acc.id}`).set(bearer(t.adminKey)).send({ provider: 'bluesky' }).expect(400);
      expect(bad2.body.message).toBe('provider is not allowed (unknown field)');
      const bad3 = await t.http().patch(`/v1/accounts/${acc.id}`).set(bearer(t.adminKey)).send({ status: 'needs_reauth' }).expect(400);
      expect(bad3.body.message).toMatch(/^status must be one of the following values: active, disabled/);
      expect(await q('SELECT name, status FROM accounts WHERE id = $1', [acc.id])).toEqual([{ name: 'Renamed blog', status: 'active' }]);
    });

    it('sets a retry policy; null restores the defaults; maxDelayMs < baseDelayMs is 400', async () => {
      const acc = await createWebhookAccount(t, t.adminKey, receiver.urlFor('/retry'));
      const path = `/v1/accounts/${acc.id}`;
      const policy = { baseDelayMs: 1000, maxDelayMs: 60_000, maxAttempts: 5 };
      const res = await t.http().patch(path).set(bearer(t.adminKey)).send({ retryPolicy: policy }).expect(200);
      expect(res.body.retryPolicy).toEqual(policy);
      expect(await q('SELECT retry_policy FROM accounts WHERE id = $1', [acc.id])).toEqual([{ retry_policy: policy }]);

      const bad = await t
        .http()
        .patch(path)
        .set(bearer(t.adminKey))
        .send({ retryPolicy: { baseDelayMs: 5000, maxDelayMs: 1000 } })
        .expect(400);
      expect(bad.body.message).toBe('retryPolicy.maxDelayMs (1000) must be at least retryPolicy.baseDelayMs (5000)');
      // Against the configured default base (2 s) too.
      const bad2 = await t
        .http()
        .patch(path)
        .set(bearer(t.adminKey))
        .send({ retryPolicy: { maxDelayMs: 1000 } })
        .expect(400);
      expect(bad2.body.message).toMatch(/retryPolicy\.maxDelayMs \(1000\) must be at least retryPolicy\.baseDelayMs \(2000\)/);
      const bad3 = await t
        .http()
        .patch(path)
        .set(bearer(t.adminKey))
        .send({ retryPolicy: { maxAttempts: 0 } })
        .expect(400);
      expect(bad3.body.message).toMatch(/^retryPolicy\.maxAttempts must not be less than 1/);
      const bad4 = await t
        .http()
        .patch(path)
        .set(bearer(t.adminKey))
        .send({ retryPolicy: { jitter: false } })
        .expect(400);
      expect(bad4.body.message).toBe('retryPolicy.jitter is not allowed (unknown field)');
      expect(await q('SELECT retry_policy FROM accounts WHERE id = $1', [acc.id])).toEqual([{ retry_policy: policy }]);

      // A PATCH without retryPolicy keeps it.
      await t.http().patch(path).set(bearer(t.adminKey)).send({ name: 'still has policy' }).expect(200);
      expect(await q('SELECT retry_policy FROM accounts WHERE id = $1', [acc.id])).toEqual([{ retry_policy: policy }]);

      const reset = await t.http().patch(path).set(bearer(t.adminKey)).send({ retryPolicy: null }).expect(200);
      expect(reset.body.retryPolicy).toBeNull();
      expect(await q('SELECT retry_policy FROM accounts WHERE id = $1', [acc.id])).toEqual([{ retry_policy: null }]);
    });

    it('disabled pauses its waiting jobs; active resumes them and closes the circuit', async () => {
      const acc = await createWebhookAccount(t, t.adminKey, receiver.urlFor('/toggle'));
      const other = await createWebhookAccount(t, t.adminKey, receiver.urlFor('/bystander'));
      const p1 = await createPost(t, t.adminKey, {
        text: 'one',
        targets: [{ accountId: acc.id }, { accountId: other.id }],
        scheduledAt: FUTURE,
      });
      const p2 = await createPost(t, t.adminKey, { text: 'two', targets: [{ accountId: acc.id }], scheduledAt: FUTURE });
      const p3 = await createPost(t, t.adminKey, { text: 'done', targets: [{ accountId: acc.id }], scheduledAt: FUTURE });
      await q(`UPDATE job_state SET status = 'succeeded', attempt_count = 1 WHERE job_id IN (SELECT id FROM jobs WHERE post_id = $1)`, [
        p3.id,
      ]);
      const statuses = async () =>
        (
          await q<{ post_id: string; account_id: string; status: string }>(
            'SELECT post_id, account_id, status FROM jobs WHERE post_id = ANY($1::uuid[])',
            [[p1.id, p2.id, p3.id]],
          )
        )
          .map(
            (r) =>
              `${r.post_id === p1.id ? 'p1' : r.post_id === p2.id ? 'p2' : 'p3'}/${r.account_id === acc.id ? 'acc' : 'other'}=${r.status}`,
          )
          .sort();

      const off = await t.http().patch(`/v1/accounts/${acc.id}`).set(bearer(t.adminKey)).send({ status: 'disabled' }).expect(200);
      expect(off.body.status).toBe('disabled');
      expect(await statuses()).toEqual(['p1/acc=paused', 'p1/other=scheduled', 'p2/acc=paused', 'p3/acc=succeeded']);
      // A paused job keeps a post that has not started "scheduled".
      expect((await t.http().get(`/v1/posts/${p2.id}`).set(bearer(t.adminKey)).expect(200)).body.jobs[0].status).toBe('paused');

      // Pretend the circuit had opened before it was disabled.
      await q(
        `UPDATE accounts SET circuit_state = 'open', circuit_open_until = now() + interval '1 hour', consecutive_failures = 7 WHERE id = $1`,
        [acc.id],
      );
      const on = await t.http().patch(`/v1/accounts/${acc.id}`).set(bearer(t.adminKey)).send({ status: 'active' }).expect(200);
      expect(on.body).toMatchObject({ status: 'active', circuit: { state: 'closed', openUntil: null, consecutiveFailures: 0 } });
      expect(await statuses()).toEqual(['p1/acc=scheduled', 'p1/other=scheduled', 'p2/acc=scheduled', 'p3/acc=succeeded']);
    });

    it('new config on a disabled account re-activates it and keeps the signing secret and headers', async () => {
      const res = await create({
        provider: 'webhook',
        name: 'Moving',
        config: { url: receiver.urlFor('/old'), headers: { 'X-Blog-Token': HEADER_VALUE } },
      }).expect(201);
      const id: string = res.body.id;
      const p = await createPost(t, t.adminKey, { text: 'moving', targets: [{ accountId: id }], scheduledAt: FUTURE });
      await t.http().patch(`/v1/accounts/${id}`).set(bearer(t.adminKey)).send({ status: 'disabled' }).expect(200);
      const before = (await q<{ credentials: string }>('SELECT credentials FROM accounts WHERE id = $1', [id]))[0].credentials;
      const moved = await t
        .http()
        .patch(`/v1/accounts/${id}`)
        .set(bearer(t.adminKey))
        .send({ config: { url: receiver.urlFor('/new') } })
        .expect(200);
      expect(moved.body).toMatchObject({ status: 'active', config: { url: receiver.urlFor('/new'), headerNames: ['X-Blog-Token'] } });
      expect(moved.body.secret).toBeUndefined();
      expect(await q('SELECT status FROM jobs WHERE post_id = $1', [p.id])).toEqual([{ status: 'scheduled' }]);
      // Verify signs with the unchanged secret and still sends the custom header.
      receiver.reset();
      receiver.respondWith(200);
      const verify = await t.http().post(`/v1/accounts/${id}/verify`).set(bearer(t.adminKey)).expect(200);
      expect(verify.body.ok).toBe(true);
      const [ping] = await receiver.waitFor(1);
      expect(ping.path).toBe('/new');
      expect(ping.headers['x-blog-token']).toBe(HEADER_VALUE);
      expect(() => verifySignature(res.body.secret, ping)).not.toThrow();
      expect((await q<{ credentials: string }>('SELECT credentials FROM accounts WHERE id = $1', [id]))[0].credentials).not.toBe(before);
    });
  });

  describe('POST /v1/accounts/:id/verify', () => {
    it('ok: true when the receiver answers 200, with a signed ping', async () => {
      const acc = await createWebhookAccount(t, t.adminKey, receiver.urlFor('/verify-ok'));
      receiver.reset();
      receiver.respondWith({ status: 200, body: { received: true } });
      const res = await t.http().post(`/v1/accounts/${acc.id}/verify`).set(bearer(t.adminKey)).expect(200);
      expect(res.body).toMatchObject({ ok: true, message: expect.stringContaining('200') });
      const [ping] = await receiver.waitFor(1);
      expect(ping.method).toBe('POST');
      expect(ping.path).toBe('/verify-ok');
      expect(() => verifySignature(acc.secret, ping)).not.toThrow();
      expect(JSON.stringify(res.body)).not.toContain(acc.secret.slice(6));
    });

    it('ok: false with a message when the receiver answers 500 (and when nothing listens)', async () => {
      const acc = await createWebhookAccount(t, t.adminKey, receiver.urlFor('/verify-500'));
      receiver.respondWith({ status: 500, body: 'boom' });
      const res = await t.http().post(`/v1/accounts/${acc.id}/verify`).set(bearer(t.adminKey)).expect(200);
      expect(res.body).toMatchObject({ ok: false, message: expect.stringMatching(/500/) });
      const dead = await createWebhookAccount(t, t.adminKey, 'http://127.0.0.1:9/nobody');
      const res2 = await t.http().post(`/v1/accounts/${dead.id}/verify`).set(bearer(t.adminKey)).expect(200);
      expect(res2.body).toMatchObject({ ok: false, message: expect.any(String) });
      expect(res2.body.message.length).toBeGreaterThan(0);
    });
  });

  describe('a webhook moved to another origin', () => {
    it('does not carry its stored headers or its signing secret there: Check on the new server reveals neither', async () => {
      const blog = await createWebhookAccount(t, t.adminKey, receiver.urlFor('/blog'), {
        config: { url: receiver.urlFor('/blog'), headers: { Authorization: 'Bearer blog-write-token' } },
      });
      // The other server: another port on loopback is another origin.
      const mine = await startReceiver();
      try {
        mine.respondWith(200);
        const moved = await t
          .http()
          .patch(`/v1/accounts/${blog.id}`)
          .set(bearer(t.adminKey))
          .send({ config: { url: mine.urlFor('/steal') } })
          .expect(200);
        expect(moved.body.config).toEqual({ url: mine.urlFor('/steal'), headerNames: [] });
        expect(moved.body.secret).toMatch(/^whsec_/);
        expect(moved.body.secret).not.toBe(blog.secret);

        await t.http().post(`/v1/accounts/${blog.id}/verify`).set(bearer(t.adminKey)).expect(200);
        const [ping] = await mine.waitFor(1);
        expect(ping.headers.authorization).toBeUndefined();
        expect(JSON.stringify(ping)).not.toContain('blog-write-token');
        expect(() => verifySignature(blog.secret, ping)).toThrow();
        expect(() => verifySignature(moved.body.secret, ping)).not.toThrow();
        // The answer to a later GET does not show the new secret again.
        expect((await t.http().get(`/v1/accounts/${blog.id}`).set(bearer(t.adminKey)).expect(200)).body.secret).toBeUndefined();
      } finally {
        await mine.close();
      }
    });

    it('keeps both within the same origin (a new path), and takes headers given again on a move', async () => {
      const blog = await createWebhookAccount(t, t.adminKey, receiver.urlFor('/a'), {
        config: { url: receiver.urlFor('/a'), headers: { 'X-Blog-Key': 'kept-value' } },
      });
      const same = await t
        .http()
        .patch(`/v1/accounts/${blog.id}`)
        .set(bearer(t.adminKey))
        .send({ config: { url: receiver.urlFor('/b') } })
        .expect(200);
      expect(same.body.secret).toBeUndefined();
      receiver.reset();
      receiver.respondWith(200);
      await t.http().post(`/v1/accounts/${blog.id}/verify`).set(bearer(t.adminKey)).expect(200);
      const [ping] = await receiver.waitFor(1);
      expect(ping.path).toBe('/b');
      expect(ping.headers['x-blog-key']).toBe('kept-value');
      expect(() => verifySignature(blog.secret, ping)).not.toThrow();

      const other = await startReceiver();
      try {
        other.respondWith(200);
        await t
          .http()
          .patch(`/v1/accounts/${blog.id}`)
          .set(bearer(t.adminKey))
          .send({ config: { url: other.urlFor('/c'), headers: { 'X-Blog-Key': 'given-again' } } })
          .expect(200);
        await t.http().post(`/v1/accounts/${blog.id}/verify`).set(bearer(t.adminKey)).expect(200);
        expect((await other.waitFor(1))[0].headers['x-blog-key']).toBe('given-again');
      } finally {
        await other.close();
      }
    });
  });

  describe('DELETE /v1/accounts/:id', () => {
    it('204, then 404 everywhere; its waiting jobs are cancelled, finished ones kept', async () => {
      const acc = await createWebhookAccount(t, t.adminKey, receiver.urlFor('/gone'));
      const keep = await createWebhookAccount(t, t.adminKey, receiver.urlFor('/stays'));
      const p1 = await createPost(t, t.adminKey, {
        text: 'waiting',
        targets: [{ accountId: acc.id }, { accountId: keep.id }],
        scheduledAt: FUTURE,
      });
      const p2 = await createPost(t, t.adminKey, { text: 'sent', targets: [{ accountId: acc.id }], scheduledAt: FUTURE });
      await q(`UPDATE job_state SET status = 'succeeded', attempt_count = 1 WHERE job_id IN (SELECT id FROM jobs WHERE post_id = $1)`, [
        p2.id,
      ]);
      const p3 = await createPost(t, t.adminKey, { text: 'paused', targets: [{ accountId: acc.id }], scheduledAt: FUTURE });
      await q(`UPDATE job_state SET status = 'paused' WHERE job_id IN (SELECT id FROM jobs WHERE post_id = $1)`, [p3.id]);

      const del = await t.http().delete(`/v1/accounts/${acc.id}`).set(bearer(t.adminKey)).expect(204);
      expect(del.text).toBe('');
      const got = await t.http().get(`/v1/accounts/${acc.id}`).set(bearer(t.adminKey)).expect(404);
      expect(got.body).toEqual({ statusCode: 404, error: 'Not Found', message: `account "${acc.id}" was not found` });
      await t.http().patch(`/v1/accounts/${acc.id}`).set(bearer(t.adminKey)).send({ name: 'x' }).expect(404);
      await t.http().post(`/v1/accounts/${acc.id}/verify`).set(bearer(t.adminKey)).expect(404);
      await t.http().post(`/v1/accounts/${acc.id}/rotate-secret`).set(bearer(t.adminKey)).expect(404);
      await t.http().delete(`/v1/accounts/${acc.id}`).set(bearer(t.adminKey)).expect(404);
      const list = await t.http().get('/v1/accounts?limit=200').set(bearer(t.adminKey)).expect(200);
      expect(list.body.data.map((a: { id: string }) => a.id)).not.toContain(acc.id);

      const jobs = await q<{ post_id: string; account_id: string; status: string }>(
        'SELECT post_id, account_id, status FROM jobs WHERE post_id = ANY($1::uuid[])',
        [[p1.id, p2.id, p3.id]],
      );
      const by = (postId: string, accountId: string) => jobs.find((j) => j.post_id === postId && j.account_id === accountId)?.status;
      expect(by(p1.id, acc.id)).toBe('cancelled');
      expect(by(p1.id, keep.id)).toBe('scheduled');
      expect(by(p2.id, acc.id)).toBe('succeeded');
      expect(by(p3.id, acc.id)).toBe('cancelled');
      // A deleted account is an unknown account for new posts.
      const post = await t
        .http()
        .post('/v1/posts')
        .set(bearer(t.adminKey))
        .send({ text: 'x', targets: [{ accountId: acc.id }] })
        .expect(400);
      expect(post.body.message).toBe(`targets.0.accountId: unknown account ${acc.id}`);
      // The post's history still shows the cancelled job.
      const view = await t.http().get(`/v1/posts/${p3.id}`).set(bearer(t.adminKey)).expect(200);
      expect(view.body).toMatchObject({ status: 'cancelled', jobs: [{ accountId: acc.id, status: 'cancelled' }] });
    });

    it('a non-UUID id is 404', async () => {
      await t.http().delete('/v1/accounts/nope').set(bearer(t.adminKey)).expect(404);
      await t.http().get('/v1/accounts/1').set(bearer(t.adminKey)).expect(404);
    });
  });

  describe('workspaces are kept apart', () => {
    it("another workspace's account is 404 on GET, PATCH, DELETE, verify and rotate-secret, and stays untouched", async () => {
      const other = await newWorkspace(t, 'Other');
      const theirs = await createWebhookAccount(t, other.key, receiver.urlFor('/theirs'));
      const before = await q('SELECT name, status, credentials, config, deleted_at FROM accounts WHERE id = $1', [theirs.id]);
      receiver.reset();
      const calls: [string, () => Promise<{ status: number; body: { message?: string } }>][] = [
        ['GET', () => t.http().get(`/v1/accounts/${theirs.id}`).set(bearer(t.adminKey))],
        ['PATCH', () => t.http().patch(`/v1/accounts/${theirs.id}`).set(bearer(t.adminKey)).send({ name: 'Hijacked', status: 'disabled' })],
        ['DELETE', () => t.http().delete(`/v1/accounts/${theirs.id}`).set(bearer(t.adminKey))],
        ['verify', () => t.http().post(`/v1/accounts/${theirs.id}/verify`).set(bearer(t.adminKey))],
        ['rotate', () => t.http().post(`/v1/accounts/${theirs.id}/rotate-secret`).set(bearer(t.adminKey))],
      ];
      for (const [name, call] of calls) {
        const res = await call();
        expect({ name, status: res.status, message: res.body.message }).toEqual({
          name,
          status: 404,
          message: `account "${theirs.id}" was not found`,
        });
      }
      expect(receiver.requests).toHaveLength(0);
      expect(await q('SELECT name, status, credentials, config, deleted_at FROM accounts WHERE id = $1', [theirs.id])).toEqual(before);
      const list = await t.http().get('/v1/accounts?limit=200').set(bearer(t.adminKey)).expect(200);
      expect(list.body.data.map((a: { id: string }) => a.id)).not.toContain(theirs.id);
      // The owner still sees it as it was.
      const own = await t.http().get(`/v1/accounts/${theirs.id}`).set(bearer(other.key)).expect(200);
      expect(own.body).toMatchObject({ name: 'Blog', status: 'active' });
      // And an unknown id answers the same way.
      const unknown = randomUUID();
      const res = await t.http().get(`/v1/accounts/${unknown}`).set(bearer(t.adminKey)).expect(404);
      expect(res.body.message).toBe(`account "${unknown}" was not found`);
    });
  });

  describe('GET /v1/accounts pagination', () => {
    it('newest first, limit and cursor', async () => {
      const ws = await newWorkspace(t, 'Paging accounts');
      for (const name of ['first', 'second', 'third']) {
        await create({ provider: 'webhook', name, config: { url: receiver.urlFor(`/${name}`) } }, ws.key).expect(201);
        await new Promise((r) => setTimeout(r, 3));
      }
      const page1 = await t.http().get('/v1/accounts?limit=2').set(bearer(ws.key)).expect(200);
      expect(page1.body.data.map((a: { name: string }) => a.name)).toEqual(['third', 'second']);
      expect(page1.body.nextCursor).toEqual(expect.any(String));
      const page2 = await t.http().get(`/v1/accounts?limit=2&cursor=${page1.body.nextCursor}`).set(bearer(ws.key)).expect(200);
      expect(page2.body.data.map((a: { name: string }) => a.name)).toEqual(['first']);
      expect(page2.body.nextCursor).toBeNull();
      const all = await t.http().get('/v1/accounts').set(bearer(ws.key)).expect(200);
      expect(all.body.data).toHaveLength(3);
      expect(all.body.nextCursor).toBeNull();
      expect(JSON.stringify(all.body)).not.toMatch(/whsec_/);
      for (const bad of ['limit=0', 'limit=201', 'limit=abc', 'cursor=garbage']) {
        const res = await t.http().get(`/v1/accounts?${bad}`).set(bearer(ws.key)).expect(400);
        expect(res.body.message).toMatch(bad.startsWith('limit') ? /limit/ : /cursor/);
      }
    });
  });
});

describe('rotate-secret with deliveries', () => {
  let e: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    e = await bootEngine();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await e.close();
    await receiver.close();
  });

  it('returns a new secret once; later deliveries verify with the new secret and not the old one', async () => {
    receiver.respondWith({ status: 200, body: { ok: true } });
    const created = await e
      .http()
      .post('/v1/accounts')
      .set(bearer(e.adminKey))
      .send({ provider: 'webhook', name: 'Rotating', config: { url: receiver.urlFor('/rot'), headers: { 'X-Blog-Token': HEADER_VALUE } } })
      .expect(201);
    const id: string = created.body.id;
    const oldSecret: string = created.body.secret;

    const p1 = await createPost(e, e.adminKey, { text: 'before rotation', targets: [{ accountId: id }] });
    await waitForJob(e, e.adminKey, p1.jobs[0].id, (j) => j.status === 'succeeded');
    const [first] = await receiver.waitFor(1);
    expect(() => verifySignature(oldSecret, first)).not.toThrow();

    const rotated = await e.http().post(`/v1/accounts/${id}/rotate-secret`).set(bearer(e.adminKey)).expect(200);
    const newSecret: string = rotated.body.secret;
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(oldSecret);
    expect(rotated.body).toMatchObject({ id, status: 'active', config: { url: receiver.urlFor('/rot'), headerNames: ['X-Blog-Token'] } });
    const got = await e.http().get(`/v1/accounts/${id}`).set(bearer(e.adminKey)).expect(200);
    expect(JSON.stringify(got.body)).not.toContain(newSecret.slice(6));
    expect(got.body.secret).toBeUndefined();
    const [row] = await query<{ credentials: string }>(e.databaseUrl, 'SELECT credentials FROM accounts WHERE id = $1', [id]);
    expect(row.credentials).not.toContain(newSecret.slice(6));

    const p2 = await createPost(e, e.adminKey, { text: 'after rotation', targets: [{ accountId: id }] });
    await waitForJob(e, e.adminKey, p2.jobs[0].id, (j) => j.status === 'succeeded');
    const requests = await receiver.waitFor(2);
    const second = requests.find((r) => r.body.includes('after rotation'))!;
    expect(second).toBeDefined();
    expect(verifySignature(newSecret, second)).toMatchObject({ type: 'post.publish', data: { text: 'after rotation' } });
    expect(() => verifySignature(oldSecret, second)).toThrow();
    expect(second.headers['x-blog-token']).toBe(HEADER_VALUE);

    // Rotating a second time invalidates the first rotated secret too.
    const again = await e.http().post(`/v1/accounts/${id}/rotate-secret`).set(bearer(e.adminKey)).expect(200);
    expect(new Set([oldSecret, newSecret, again.body.secret]).size).toBe(3);
    receiver.reset();
    const verify = await e.http().post(`/v1/accounts/${id}/verify`).set(bearer(e.adminKey)).expect(200);
    expect(verify.body.ok).toBe(true);
    const [ping] = await receiver.waitFor(1);
    expect(() => verifySignature(again.body.secret, ping)).not.toThrow();
    expect(() => verifySignature(newSecret, ping)).toThrow();
  });
});
