import { MastodonConnector } from '../src/connectors/mastodon/mastodon.connector';
import { TestApp, bootTestApp } from './support/app';
import { bearer } from './support/config';
import { bootEngine, createPost, waitForJob } from './support/engine';
import { FakeMastodon, FakeStatus, startFakeMastodon } from './support/fake-mastodon';
import { makeImage, uploadImage } from './support/media';
import { withClient } from './support/database';
import { pollUntil } from './support/poll';
import { loggedInAgent } from './support/settings-http';
import type { JobWithAttempts } from '../src/jobs/jobs.service';

/**
 * The Mastodon connector through the real app (API, queue, worker) against a loopback instance
 * that follows Mastodon's documented behaviour (test/support/fake-mastodon.ts cites it).
 */

/** The API's answer for a job (GET /v1/jobs/:id), as the jobs module types it. */
type Job = JobWithAttempts;

describe('Mastodon connector', () => {
  let t: TestApp;
  let fake: FakeMastodon;
  let key: string;
  let n = 0;

  beforeAll(async () => {
    fake = await startFakeMastodon();
    // The fake is on loopback: this Herald allows private addresses (HERALD_ALLOW_PRIVATE_URLS), as a test setup does.
    t = await bootEngine({ allowPrivateUrls: true });
    key = t.adminKey;
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  async function connect(token = fake.issueToken(), name?: string): Promise<{ id: string; token: string }> {
    const res = await t
      .http()
      .post('/v1/accounts')
      .set(bearer(key))
      .send({ provider: 'mastodon', ...(name ? { name } : {}), config: { instanceUrl: fake.url, accessToken: token } });
    if (res.status !== 201) throw new Error(`account creation failed: ${res.status} ${JSON.stringify(res.body)}`);
    return { id: res.body.id as string, token };
  }

  /** Unique text per test. */
  const text = (s: string) => `${s} [${++n}]`;
  const finished = (j: Job) => ['succeeded', 'dead', 'paused'].includes(j.status);

  async function publish(accountId: string, body: Record<string, unknown>, done: (j: Job) => boolean = finished, target = {}) {
    const post = await createPost(t, key, { targets: [{ accountId, ...target }], ...body });
    return waitForJob<Job>(t, key, post.jobs[0].id, done);
  }

  /** The thread as a reader follows it on the instance: each part a reply to the one before. */
  function expectChain(statuses: FakeStatus[], job: Job): void {
    const ids = (job.parts ?? []).map((p) => p.remoteId);
    expect(statuses.map((s) => s.id)).toEqual(ids);
    expect(statuses[0].inReplyToId).toBeNull();
    statuses.slice(1).forEach((s, i) => expect(s.inReplyToId).toBe(statuses[i].id));
  }

  describe('connecting by pasted access token', () => {
    it('checks the token with verify_credentials before saving, and takes the name, handle and instance limits from the instance', async () => {
      fake.maxCharacters = 640;
      try {
        const token = fake.issueToken();
        const { id } = await connect(token);
        const got = await t.http().get(`/v1/accounts/${id}`).set(bearer(key)).expect(200);
        expect(got.body).toMatchObject({ provider: 'mastodon', name: 'Ada Lovelace', status: 'active' });
        expect(got.body.config).toMatchObject({
          instanceUrl: fake.url,
          accountId: fake.accountId,
          username: 'ada',
          displayName: 'Ada Lovelace',
          limits: { maxCharacters: 640, charactersReservedPerUrl: 23, maxMediaAttachments: 4 },
        });
        expect(JSON.stringify(got.body)).not.toContain(token);
        expect(fake.calls('verify').at(-1)!.headers.authorization).toBe(`Bearer ${token}`);
      } finally {
        fake.maxCharacters = 500;
      }
    });

    it('refuses a token the instance refuses with a 400 that says so, and saves nothing', async () => {
      const before = (await t.http().get('/v1/accounts?limit=200').set(bearer(key)).expect(200)).body.data.length as number;
      const bad = `mstdn-revoked-${++n}`;
      const res = await t
        .http()
        .post('/v1/accounts')
        .set(bearer(key))
        .send({ provider: 'mastodon', name: 'Refused', config: { instanceUrl: fake.url, accessToken: bad } });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(
        /config\.accessToken could not be checked, so nothing was saved: .* refused the access token \(401: The access token is invalid\)/,
      );
      expect(res.body.message).not.toContain(bad);
      const after = (await t.http().get('/v1/accounts?limit=200').set(bearer(key)).expect(200)).body.data.length as number;
      expect(after).toBe(before);
    });

    it('the database holds the rules: the provider is one Herald knows, and a Mastodon account names its instance', async () => {
      const { id } = await connect();
      await withClient(t.databaseUrl, async (db) => {
        await expect(db.query(`UPDATE accounts SET config = config - 'instanceUrl' WHERE id = $1`, [id])).rejects.toThrow(
          /accounts_mastodon_instance/,
        );
        await expect(db.query(`UPDATE accounts SET provider = 'threads' WHERE id = $1`, [id])).rejects.toThrow(/accounts_provider_check/);
      });
    });

    it('refuses an instance address with a path, and unknown fields, naming them', async () => {
      const withPath = await t
        .http()
        .post('/v1/accounts')
        .set(bearer(key))
        .send({ provider: 'mastodon', config: { instanceUrl: `${fake.url}/api`, accessToken: fake.issueToken() } });
      expect(withPath.status).toBe(400);
      expect(withPath.body.message).toMatch(/config\.instanceUrl must be the address of a Mastodon instance.*without a path/);
      const extra = await t
        .http()
        .post('/v1/accounts')
        .set(bearer(key))
        .send({ provider: 'mastodon', config: { instanceUrl: fake.url, accessToken: fake.issueToken(), clientSecret: 'x' } });
      expect(extra.status).toBe(400);
      expect(extra.body.message).toMatch(/config\."clientSecret" is not allowed/);
    });

    it('PATCH with a new token reconnects an account that needs re-authentication; verify reads the limits again', async () => {
      const { id, token } = await connect();
      fake.revoke(token);
      const job = await publish(id, { text: text('before reconnect') }, (j) => j.status === 'paused');
      expect(job.attempts[0]).toMatchObject({ httpStatus: 401, errorClass: 'auth' });
      const refused = await t.http().post(`/v1/accounts/${id}/verify`).set(bearer(key)).expect(200);
      expect(refused.body).toMatchObject({ ok: false, details: { httpStatus: 401 } });

      const fresh = fake.issueToken();
      const patched = await t
        .http()
        .patch(`/v1/accounts/${id}`)
        .set(bearer(key))
        .send({ config: { accessToken: fresh } })
        .expect(200);
      expect(patched.body).toMatchObject({ status: 'active', config: { instanceUrl: fake.url } });
      const done = await waitForJob<Job>(t, key, job.id, (j) => j.status === 'succeeded');
      expect(fake.statuses.find((s) => s.id === done.remoteId)).toBeDefined();

      fake.maxCharacters = 1000;
      try {
        const ok = await t.http().post(`/v1/accounts/${id}/verify`).set(bearer(key)).expect(200);
        expect(ok.body.ok).toBe(true);
        expect(ok.body.message).toMatch(/posts as @ada@127\.0\.0\.1:\d+; statuses up to 1000 characters/);
        expect(ok.body.configUpdate).toBeUndefined();
        const after = await t.http().get(`/v1/accounts/${id}`).set(bearer(key)).expect(200);
        expect(after.body.config.limits.maxCharacters).toBe(1000);
        // The intake counts with the instance's own limit now: 900 characters go.
        const post = await t
          .http()
          .post('/v1/posts')
          .set(bearer(key))
          .send({ text: 'x'.repeat(900), targets: [{ accountId: id }] });
        expect(post.status).toBe(201);
        await waitForJob<Job>(t, key, post.body.jobs[0].id, (j) => j.status === 'succeeded');
      } finally {
        fake.maxCharacters = 500;
      }
    });
  });

  describe('intake checks against the instance', () => {
    it("refuses text over the instance's limit with a 400 naming it, counting every link as 23", async () => {
      const { id } = await connect();
      const over = await t
        .http()
        .post('/v1/posts')
        .set(bearer(key))
        .send({ text: 'a'.repeat(501), targets: [{ accountId: id }] });
      expect(over.status).toBe(400);
      expect(over.body.message).toMatch(
        /targets\.0 \(mastodon\): text is 501 characters as the instance counts them \(every link as 23\), the limit is 500 \(127\.0\.0\.1:\d+'s own limit\)/,
      );
      // 480 characters and a 200-character link: 480 + 1 + 23 = 504 > 500 is refused; 470 + 1 + 23 goes.
      const link = `https://example.com/${'p'.repeat(180)}`;
      const withLink = await t
        .http()
        .post('/v1/posts')
        .set(bearer(key))
        .send({ text: `${'a'.repeat(480)} ${link}`, targets: [{ accountId: id }] });
      expect(withLink.status).toBe(400);
      expect(withLink.body.message).toMatch(/text is 504 characters/);
      const fits = await t
        .http()
        .post('/v1/posts')
        .set(bearer(key))
        .send({ text: `${'a'.repeat(470)} ${link}`, targets: [{ accountId: id }] });
      expect(fits.status).toBe(201);
      // The content warning counts with the text.
      const cw = await t
        .http()
        .post('/v1/posts')
        .set(bearer(key))
        .send({ text: 'b'.repeat(490), targets: [{ accountId: id, spoilerText: 'Long content warning' }] });
      expect(cw.status).toBe(400);
      expect(cw.body.message).toMatch(
        /text is 510 characters as the instance counts them \(every link as 23, the content warning included\)/,
      );
    });

    it('refuses visibility and a content warning on accounts of other platforms, and an unknown visibility', async () => {
      const { id } = await connect();
      const hook = await t
        .http()
        .post('/v1/accounts')
        .set(bearer(key))
        .send({ provider: 'webhook', name: 'Blog', config: { url: 'http://127.0.0.1:9/hook' } })
        .expect(201);
      const wrong = await t
        .http()
        .post('/v1/posts')
        .set(bearer(key))
        .send({ text: 'hello', targets: [{ accountId: id }, { accountId: hook.body.id, visibility: 'unlisted' }] });
      expect(wrong.status).toBe(400);
      expect(wrong.body.message).toBe(
        `targets.1.visibility: only Mastodon accounts take a visibility (account ${hook.body.id} is webhook)`,
      );
      const unknown = await t
        .http()
        .post('/v1/posts')
        .set(bearer(key))
        .send({ text: 'hello', targets: [{ accountId: id, visibility: 'friends' }] });
      expect(unknown.status).toBe(400);
      expect(unknown.body.message).toMatch(/visibility must be one of: public, unlisted, private, direct/);
    });
  });

  describe('publishing', () => {
    it('publishes a post with two images and a thread once: images with their alt text (202, then processed), each part a reply to the previous, one key per part', async () => {
      const { id } = await connect();
      fake.processingPolls = 1;
      try {
        const a = await uploadImage(t, key, await makeImage('png', 40, 30), 'a red square');
        const b = await uploadImage(t, key, await makeImage('jpeg', 30, 40), 'a tall red rectangle');
        const first = text('Thread start');
        const job = await publish(
          id,
          {
            text: first,
            link: 'https://example.com/notes',
            media: [a, b],
            thread: [{ text: 'Part two' }, { text: 'Part three', link: 'https://example.com/three' }],
          },
          finished,
          { visibility: 'unlisted', spoilerText: 'Long thread' },
        );
        expect(job.status).toBe('succeeded');
        expect(job.attempts).toHaveLength(1);

        const statuses = fake.statuses.slice(-3);
        expect(statuses.map((s) => s.text)).toEqual([
          `${first}\n\nhttps://example.com/notes`,
          'Part two',
          'Part three\n\nhttps://example.com/three',
        ]);
        expectChain(statuses, job);
        expect(statuses.every((s) => s.visibility === 'unlisted' && s.spoilerText === 'Long thread')).toBe(true);
        // Two images, each uploaded with its description, polled until processed, attached in order.
        const media = statuses[0].mediaIds.map((m) => fake.media.get(m)!);
        expect(media.map((m) => m.description)).toEqual(['a red square', 'a tall red rectangle']);
        expect(media.map((m) => m.mimeType)).toEqual(['image/png', 'image/jpeg']);
        expect(fake.calls('media-get').length).toBeGreaterThanOrEqual(2);
        // One Idempotency-Key per part, derived from the job's.
        const keys = fake
          .calls('statuses')
          .slice(-3)
          .map((r) => r.headers['idempotency-key']);
        expect(keys).toEqual([`${job.idempotencyKey}/part-1`, `${job.idempotencyKey}/part-2`, `${job.idempotencyKey}/part-3`]);
        // What a user sees: the job links to the first status, each part to its own.
        expect(job.remoteId).toBe(statuses[0].id);
        expect(job.remoteUrl).toBe(`${fake.url}/@ada/${statuses[0].id}`);
        expect(job.parts!.map((p) => p.published)).toEqual([true, true, true]);
      } finally {
        fake.processingPolls = 0;
      }
    });

    it('the instance answers a repeated Idempotency-Key within its window with the first status, and a new one after it (the fake, as documented)', async () => {
      const token = fake.issueToken();
      const body = JSON.stringify({ status: text('same key') });
      const idempotencyKey = `key-${n}`;
      const send = () =>
        fetch(`${fake.url}/api/v1/statuses`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
          body,
        }).then((r) => r.json() as Promise<{ id: string }>);
      const one = await send();
      expect((await send()).id).toBe(one.id);
      fake.idempotencyWindowMs = 0;
      try {
        expect((await send()).id).not.toBe(one.id);
      } finally {
        fake.idempotencyWindowMs = 60 * 60_000;
      }
    });

    it('the answer of part 2 is lost, within the idempotency window: the retry finds part 2 and publishes no duplicate', async () => {
      const { id } = await connect();
      fake.fail('statuses', { apply: 'answer' }, { apply: 'drop' });
      const first = text('Lost within the hour');
      const job = await publish(id, { text: first, thread: [{ text: 'Second (answer lost)' }, { text: 'Third' }] });
      expect(job.status).toBe('succeeded');
      expect(job.attempts).toHaveLength(2);
      expect(job.attempts[0]).toMatchObject({ errorClass: 'transient', httpStatus: null });
      expect(job.attempts[0].message).toMatch(
        /while creating part 2 of 3\); part 1 of 3 published \(a retry or requeue continues with part 2\)/,
      );
      expect(job.attempts[1].warnings.join(' ')).toMatch(/part 2 of 3 was already published by an earlier attempt whose answer was lost/);
      const thread = fake.posted(first);
      const all = [thread[0], ...fake.statuses.filter((s) => s.text === 'Second (answer lost)' || s.text === 'Third').slice(-2)];
      expect(fake.statuses.filter((s) => s.inReplyToId === thread[0].id)).toHaveLength(1);
      expectChain(all, job);
    });

    it('a post with two images and a thread of two posts is published once; the answer of part 2 is lost, past the window, and the retry still makes no duplicate', async () => {
      const { id } = await connect();
      fake.idempotencyWindowMs = 0;
      try {
        const a = await uploadImage(t, key, await makeImage('png', 20, 20), 'first image');
        const b = await uploadImage(t, key, await makeImage('webp', 20, 20), 'second image');
        fake.fail('statuses', { apply: 'answer' }, { apply: 'drop' });
        const first = text('Two-post thread');
        const job = await publish(id, { text: first, media: [a, b], thread: [{ text: 'The reply, its answer lost' }] });
        expect(job.status).toBe('succeeded');
        expect(job.attempts).toHaveLength(2);
        const root = fake.posted(first);
        expect(root).toHaveLength(1);
        expect(root[0].mediaIds.map((m) => fake.media.get(m)!.description)).toEqual(['first image', 'second image']);
        const replies = fake.statuses.filter((s) => s.inReplyToId === root[0].id);
        expect(replies).toHaveLength(1);
        expect(job.parts!.map((p) => p.remoteId)).toEqual([root[0].id, replies[0].id]);
      } finally {
        fake.idempotencyWindowMs = 60 * 60_000;
      }
    });

    it('within the window, a retry whose look cannot reach back that far is saved by the Idempotency-Key', async () => {
      const { id } = await connect();
      // Part 2 is applied and its answer lost; then the account posts 200 statuses elsewhere, so
      // the look at its newest statuses (200 at most) does not reach part 2.
      fake.fail('statuses', { apply: 'answer' }, { apply: 'drop', after: () => fake.seed(200) });
      const first = text('Busy account');
      const job = await publish(id, { text: first, thread: [{ text: 'Busy second' }, { text: 'Busy third' }] });
      expect(job.status).toBe('succeeded');
      expect(job.attempts[1].warnings.join(' ')).toMatch(
        /do not reach back to when this job was scheduled; it was sent again with its idempotency key/,
      );
      const root = fake.posted(first)[0];
      const seconds = fake.statuses.filter((s) => s.inReplyToId === root.id && !s.deleted);
      expect(seconds).toHaveLength(1);
      expect(job.parts![1].remoteId).toBe(seconds[0].id);
    });

    it('past the window (the instance forgot the key), the retry looks the status up and adopts it: no duplicate', async () => {
      const { id } = await connect();
      fake.idempotencyWindowMs = 0;
      try {
        fake.fail('statuses', { apply: 'answer' }, { apply: 'drop' });
        const first = text('Lost past the hour');
        const job = await publish(id, {
          text: first,
          thread: [{ text: 'Second, seen by @ada@other.example & co' }, { text: 'Third, past the hour' }],
        });
        expect(job.status).toBe('succeeded');
        const root = fake.posted(first)[0];
        const seconds = fake.statuses.filter((s) => s.inReplyToId === root.id);
        expect(seconds).toHaveLength(1);
        expect(job.parts!.map((p) => p.remoteId)).toEqual([
          root.id,
          seconds[0].id,
          fake.statuses.find((s) => s.inReplyToId === seconds[0].id)!.id,
        ]);
        expect(job.attempts[1].warnings.join(' ')).toMatch(/part 2 of 3 was already published/);
        expect(fake.calls('account-statuses').at(-1)!.path).toMatch(
          new RegExp(`/api/v1/accounts/${fake.accountId}/statuses\\?limit=40&exclude_reblogs=true`),
        );
      } finally {
        fake.idempotencyWindowMs = 60 * 60_000;
      }
    });

    it('a single post whose answer was lost past the window is found and kept, not posted again', async () => {
      const { id } = await connect();
      fake.idempotencyWindowMs = 0;
      try {
        fake.fail('statuses', { apply: 'drop' });
        const body = text('Single, answer lost');
        const job = await publish(id, { text: body, link: 'https://example.com/single' });
        expect(job.status).toBe('succeeded');
        expect(fake.posted(body)).toHaveLength(1);
        expect(job.remoteId).toBe(fake.posted(body)[0].id);
      } finally {
        fake.idempotencyWindowMs = 60 * 60_000;
      }
    });
  });

  describe('a target keeps its visibility and content warning', () => {
    it('through a draft, its scheduling and an edit of the scheduled post', async () => {
      const { id } = await connect();
      const draft = await t
        .http()
        .post('/v1/posts')
        .set(bearer(key))
        .send({ text: text('Draft toot'), status: 'draft', targets: [{ accountId: id, visibility: 'private', spoilerText: 'Work talk' }] })
        .expect(201);
      expect(draft.body.draftTargets).toEqual([{ accountId: id, visibility: 'private', spoilerText: 'Work talk' }]);
      const later = new Date(Date.now() + 3_600_000).toISOString();
      const scheduled = await t
        .http()
        .patch(`/v1/posts/${draft.body.id}`)
        .set(bearer(key))
        .send({ status: 'scheduled', scheduledAt: later })
        .expect(200);
      await t
        .http()
        .patch(`/v1/posts/${draft.body.id}`)
        .set(bearer(key))
        .send({ text: text('Edited toot') })
        .expect(200);
      const rows = await withClient(t.databaseUrl, (db) =>
        db.query<{ payload: { text: string; mastodon?: unknown } }>('SELECT payload FROM job_payloads WHERE id = $1', [
          scheduled.body.jobs[0].id,
        ]),
      );
      expect(rows.rows[0].payload.text).toMatch(/^Edited toot/);
      expect(rows.rows[0].payload.mastodon).toEqual({ visibility: 'private', spoilerText: 'Work talk' });
      // And the API shows them on the job, as the post's answer and the job's own.
      expect(scheduled.body.jobs[0].mastodon).toEqual({ visibility: 'private', spoilerText: 'Work talk' });
      const shown = await t.http().get(`/v1/posts/${draft.body.id}`).set(bearer(key)).expect(200);
      expect(shown.body.jobs.map((j: { mastodon: unknown }) => j.mastodon)).toEqual([{ visibility: 'private', spoilerText: 'Work talk' }]);
      const job = await t.http().get(`/v1/jobs/${scheduled.body.jobs[0].id}`).set(bearer(key)).expect(200);
      expect(job.body.mastodon).toEqual({ visibility: 'private', spoilerText: 'Work talk' });
      // The content warning counts on an edit too: 495 + 9 characters is over 500.
      const over = await t
        .http()
        .patch(`/v1/posts/${draft.body.id}`)
        .set(bearer(key))
        .send({ text: 'e'.repeat(495) });
      expect(over.status).toBe(400);
      expect(over.body.message).toMatch(
        /text is 504 characters as the instance counts them \(every link as 23, the content warning included\)/,
      );
    });

    it('through the dead-letter queue: an edit is checked against the instance, and the requeued status keeps them', async () => {
      const { id } = await connect();
      fake.maxCharacters = 100;
      let jobId: string;
      try {
        const dead = await publish(id, { text: text('d'.repeat(150)) }, finished, { visibility: 'unlisted', spoilerText: 'Long' });
        expect(dead).toMatchObject({ status: 'dead', deadReason: 'permanent' });
        jobId = dead.id;
        // The edit is checked as the intake checks: against the limit Herald knows for the instance.
        const tooLong = await t
          .http()
          .patch(`/v1/dlq/${jobId}`)
          .set(bearer(key))
          .send({ text: 'e'.repeat(500) });
        expect(tooLong.status).toBe(400);
        expect(tooLong.body.message).toMatch(/mastodon: text is 504 characters as the instance counts them .*the limit is 500/);
        await t
          .http()
          .patch(`/v1/dlq/${jobId}`)
          .set(bearer(key))
          .send({ text: text('Shorter now') })
          .expect(200);
        await t.http().post(`/v1/dlq/${jobId}/requeue`).set(bearer(key)).send({}).expect(200);
        const done = await waitForJob<Job>(t, key, jobId, (j) => j.status === 'succeeded');
        const status = fake.statuses.find((x) => x.id === done.remoteId)!;
        expect(status).toMatchObject({ visibility: 'unlisted', spoilerText: 'Long' });
        expect(status.text).toMatch(/^Shorter now/);
      } finally {
        fake.maxCharacters = 500;
      }
    });
  });

  describe('outcomes', () => {
    it("422 is permanent and shows the instance's message", async () => {
      const { id } = await connect();
      // The instance lowered its limit after the account was connected: Herald's intake still counts 500.
      fake.maxCharacters = 100;
      try {
        const job = await publish(id, { text: text('c'.repeat(150)) });
        expect(job).toMatchObject({ status: 'dead', deadReason: 'permanent', errorClass: 'permanent' });
        expect(job.attempts).toHaveLength(1);
        expect(job.lastError).toMatch(/refused the status: Validation failed: Text character limit of 100 exceeded/);
      } finally {
        fake.maxCharacters = 500;
      }
    });

    it('401 pauses the job and the account needs re-authentication', async () => {
      const { id, token } = await connect();
      fake.revoke(token);
      const job = await publish(id, { text: text('revoked') }, (j) => j.status === 'paused');
      expect(job.attempts[0]).toMatchObject({ httpStatus: 401, errorClass: 'auth' });
      expect(job.lastError).toMatch(/refused the access token while creating the status: The access token is invalid/);
      const account = await t.http().get(`/v1/accounts/${id}`).set(bearer(key)).expect(200);
      expect(account.body.status).toBe('needs_reauth');
      expect(JSON.stringify(job)).not.toContain(token);
    });

    it('429 waits until X-RateLimit-Reset (an ISO 8601 time), then publishes', async () => {
      const { id } = await connect();
      const reset = new Date(Date.now() + 2_000);
      fake.fail('statuses', {
        status: 429,
        body: { error: 'Too many requests' },
        headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset.toISOString() },
      });
      const job = await publish(id, { text: text('rate limited') });
      expect(job.status).toBe('succeeded');
      expect(job.attempts[0]).toMatchObject({ httpStatus: 429, errorClass: 'transient', decision: 'retry' });
      expect(Date.parse(job.attempts[0].retryAt!)).toBeGreaterThanOrEqual(reset.getTime() - 50);
      const retried = fake.calls('statuses').filter((r) => r.body.toString().includes('rate limited')).length;
      expect(retried).toBe(2);
    });

    it('5xx and a cut connection are retried until the status goes out', async () => {
      const { id } = await connect();
      fake.fail('statuses', { status: 503, body: { error: 'Service Unavailable' } });
      fake.fail('media', { status: 502, body: '<html>Bad Gateway</html>' });
      const media = await uploadImage(t, key, await makeImage('png'), 'retried image');
      const job = await publish(id, { text: text('flaky instance'), media: [media] });
      expect(job.status).toBe('succeeded');
      expect(job.attempts.map((a) => a.httpStatus)).toEqual([502, 503, 200]);
      expect(job.attempts[0].message).toMatch(/HTTP 502.*while uploading image 1/);
    });

    it('404 on in_reply_to_id (the previous part was deleted) is permanent with a clear message', async () => {
      const { id } = await connect();
      // Part 1 goes out, and a person deletes it before part 2 is posted.
      fake.fail('statuses', { apply: 'answer', after: (created) => fake.delete(created!.id) });
      const job = await publish(id, { text: text('Deleted start'), thread: [{ text: 'orphan two' }, { text: 'orphan three' }] });
      expect(job).toMatchObject({ status: 'dead', deadReason: 'permanent' });
      expect(job.lastError).toMatch(
        /^part 1 \(status \d+\) is no longer on 127\.0\.0\.1:\d+: it was deleted, so part 2 of 3 cannot reply to it\. Post the rest as a new thread; part 1 of 3 published/,
      );
    });
  });

  describe('the settings page', () => {
    const undo: (() => void)[] = [];
    const afterThis = (fn: () => void) => undo.push(fn);
    afterEach(() => undo.splice(0).forEach((fn) => fn()));

    it('connects an account by pasted token: a refused token is said and saves nothing; the card shows the handle and the instance limit', async () => {
      const { agent, csrf } = await loggedInAgent(t);
      const form = await agent.get('/settings/accounts/connect/mastodon').expect(200);
      expect(form.text).toContain('Connect a Mastodon account');
      const count = async () => ((await t.http().get('/v1/accounts?limit=200').set(bearer(key))).body.data as unknown[]).length;
      const before = await count();

      const refused = await agent
        .post('/settings/accounts/connect/mastodon')
        .type('form')
        .send({ _csrf: csrf, instanceUrl: fake.url, accessToken: 'mstdn-not-a-token', name: '' });
      expect(refused.status).toBe(400);
      expect(refused.text).toMatch(/could not be checked, so nothing was saved: 127\.0\.0\.1:\d+ refused the access token/);
      expect(refused.text).not.toContain('mstdn-not-a-token');
      expect(await count()).toBe(before);

      fake.maxCharacters = 640;
      try {
        const saved = await agent
          .post('/settings/accounts/connect/mastodon')
          .type('form')
          .send({ _csrf: csrf, instanceUrl: fake.url, accessToken: fake.issueToken(), name: '' });
        expect(saved.status).toBe(303);
        expect(await count()).toBe(before + 1);
        const page = await agent.get('/settings/accounts').expect(200);
        const card = page.text.slice(page.text.lastIndexOf('<li class="card"'));
        expect(card).toContain('<h2 id="account-');
        expect(card).toContain('Ada Lovelace');
        expect(card).toContain(`@ada@${fake.host}`);
        expect(card).toContain('640 characters a status (links count as 23), 4 images: the instance&#x27;s own limits');
      } finally {
        fake.maxCharacters = 500;
      }
    });

    it('reconnects an account that needs re-authentication with a new token for the same instance, and its waiting post goes out', async () => {
      const { id, token } = await connect();
      fake.revoke(token);
      const job = await publish(id, { text: text('waits for a person') }, (j) => j.status === 'paused');
      const { agent, csrf } = await loggedInAgent(t);
      const form = await agent.get(`/settings/accounts/${id}/reconnect`).expect(200);
      expect(form.text).toContain(`value="${fake.url}"`);
      const refused = await agent
        .post(`/settings/accounts/${id}/reconnect`)
        .type('form')
        .send({ _csrf: csrf, instanceUrl: fake.url, accessToken: token });
      expect(refused.status).toBe(400);
      expect(refused.text).toMatch(/refused the access token/);
      const saved = await agent
        .post(`/settings/accounts/${id}/reconnect`)
        .type('form')
        .send({ _csrf: csrf, instanceUrl: fake.url, accessToken: fake.issueToken() });
      expect(saved.status).toBe(303);
      await waitForJob<Job>(t, key, job.id, (j) => j.status === 'succeeded');
    });

    it("counts in the composer with the instance's limit, links as 23 and the content warning, and posts with the visibility chosen", async () => {
      // An instance of 640 characters, which Herald reads when the account is connected.
      fake.maxCharacters = 640;
      afterThis(() => (fake.maxCharacters = 500));
      const { id } = await connect(undefined, `Composer toot ${++n}`);
      const { agent, csrf } = await loggedInAgent(t);
      const compose = await agent.get('/settings/compose').expect(200);
      expect(compose.text).toMatch(new RegExp(`value="${id}"[^>]*data-limit="640" data-unit="graphemes" data-url-length="23"`));
      expect(compose.text).toContain('<legend>Mastodon</legend>');

      const body = `${'a'.repeat(600)} https://example.com/${'x'.repeat(100)}`;
      const preview = await agent
        .post('/settings/compose')
        .type('form')
        .send({ _csrf: csrf, text: body, accounts: id, spoilerText: 'Heads up', visibility: 'private', action: 'preview' })
        .expect(200);
      // 600 + 1 + 23, and the 8 characters of the content warning.
      expect(preview.text).toContain('632 / 640 characters');
      expect(preview.text).toContain('<strong>Content warning:</strong> Heads up');

      const now = await agent
        .post('/settings/compose')
        .type('form')
        .send({ _csrf: csrf, text: body, accounts: id, spoilerText: 'Heads up', visibility: 'private', action: 'now' });
      expect(now.status).toBe(303);
      const status = await pollUntil(
        'the status on the instance',
        () => fake.posted('a'.repeat(600)),
        (found) => found.length > 0,
      );
      expect(status[0]).toMatchObject({ visibility: 'private', spoilerText: 'Heads up' });
    });

    it('edits a scheduled post on the page with the content warning its job keeps: counted, previewed, and still sent', async () => {
      const { id } = await connect(undefined, `Edited toot ${++n}`);
      const scheduledAt = new Date(Date.now() + 3_600_000).toISOString();
      const created = await t
        .http()
        .post('/v1/posts')
        .set(bearer(key))
        .send({ text: 'c'.repeat(480), scheduledAt, targets: [{ accountId: id, spoilerText: 'Spoilers' }] })
        .expect(201);
      const { agent, csrf } = await loggedInAgent(t);
      // 480 characters and the 8 of the content warning, on the editor as it opens…
      const editor = await agent.get(`/settings/posts/${created.body.id}/edit`).expect(200);
      expect(editor.text).toContain('488 / 500 characters');
      expect(editor.text).toContain('<strong>Content warning:</strong> Spoilers');
      // …and after a preview of new text, which the form sends without the (fixed) warning.
      const preview = await agent
        .post(`/settings/posts/${created.body.id}/edit`)
        .type('form')
        .send({ _csrf: csrf, text: 'c'.repeat(495), action: 'preview' })
        .expect(200);
      expect(preview.text).toContain('503 / 500 characters');
      expect(preview.text).toContain('<strong>Content warning:</strong> Spoilers');
      const stored = await t.http().get(`/v1/posts/${created.body.id}`).set(bearer(key)).expect(200);
      expect(stored.body.text).toBe('c'.repeat(480));
      expect(stored.body.jobs[0].mastodon).toEqual({ visibility: null, spoilerText: 'Spoilers' });
    });
  });

  describe('SSRF: instance addresses are chosen by users', () => {
    it('refuses an instance on a private address unless HERALD_ALLOW_PRIVATE_URLS; the instance never hears from Herald', async () => {
      const strict = await bootTestApp({ config: { allowPrivateUrls: false } });
      try {
        const before = fake.requests.length;
        const res = await strict
          .http()
          .post('/v1/accounts')
          .set(bearer(strict.adminKey))
          .send({ provider: 'mastodon', name: 'Private', config: { instanceUrl: fake.url, accessToken: fake.issueToken() } });
        expect(res.status).toBe(400);
        expect(res.body.message).toMatch(/^config\.instanceUrl .*loopback.*HERALD_ALLOW_PRIVATE_URLS=true/);
        // A public instance over plain http: refused before anything is sent (the token would travel in the clear).
        const plain = await strict
          .http()
          .post('/v1/accounts')
          .set(bearer(strict.adminKey))
          .send({
            provider: 'mastodon',
            name: 'Plain',
            config: { instanceUrl: 'http://93.184.216.34', accessToken: 'a-token-never-sent' },
          });
        expect(plain.status).toBe(400);
        expect(plain.body.message).toMatch(/^config\.instanceUrl must start with https:\/\//);
        expect(JSON.stringify(plain.body)).not.toContain('a-token-never-sent');
        expect(fake.requests.length).toBe(before);
      } finally {
        await strict.close();
      }
    });

    it('checks again at connect time: an account saved while private addresses were allowed is refused once they are not', async () => {
      const connector = new MastodonConnector({ ...t.config, allowPrivateUrls: false });
      const before = fake.requests.length;
      const account = {
        id: 'a',
        workspaceId: 'w',
        name: 'Saved earlier',
        config: { instanceUrl: fake.url, accountId: fake.accountId, username: 'ada' },
        credentials: { accessToken: fake.issueToken() },
      };
      const job = {
        id: 'j',
        postId: 'p',
        accountId: 'a',
        workspaceId: 'w',
        idempotencyKey: 'k',
        attemptNumber: 1,
        payload: { text: 'never sent', title: null, link: null, media: [], metadata: null, scheduledAt: new Date().toISOString() },
        media: [],
        previousAttempt: null,
      };
      const outcome = await connector.deliver(job, account, new AbortController().signal);
      expect(outcome).toMatchObject({ errorClass: 'permanent', networkError: 'blocked_address' });
      expect(outcome.message).toMatch(/loopback.*HERALD_ALLOW_PRIVATE_URLS=true/);
      const verified = await connector.verify(account);
      expect(verified.ok).toBe(false);
      expect(fake.requests.length).toBe(before);
    });
  });
});
