import { NEWEST_LINKEDIN_VERSION } from '../src/config/linkedin-versions';
import { randomUUID } from 'node:crypto';
import type { QueryRunner } from 'typeorm';
import { LinkedInOperatorEndpoints1764510000000 } from '../migrations/1764510000000-linkedin-operator-endpoints';
import type { DeliveryAccount, DeliveryJob } from '../src/connectors/connector.interface';
import { LinkedInConnector } from '../src/connectors/linkedin/linkedin.connector';
import { fromLittleText } from '../src/connectors/linkedin/linkedin-text';
import { TestApp } from './support/app';
import { withClient } from './support/database';
import { bootEngine, createPost, waitForJob } from './support/engine';
import { FakeLinkedIn, startFakeLinkedIn } from './support/fake-linkedin';
import { makeImage, uploadImage } from './support/media';
import { Receiver, startReceiver } from './support/receiver';
import { bearer, fastEngine } from './support/config';
import type { JobWithAttempts } from '../src/jobs/jobs.service';

/**
 * The LinkedIn connector through the real app (API, queue, worker) against a loopback fake that
 * follows LinkedIn's documented behaviour (test/support/fake-linkedin.ts cites the pages).
 */

/** The API's answer for a job (GET /v1/jobs/:id), as the jobs module types it. */
type Job = JobWithAttempts;

describe('LinkedIn connector', () => {
  let t: TestApp;
  let fake: FakeLinkedIn;
  let key: string;
  let n = 0;

  beforeAll(async () => {
    fake = await startFakeLinkedIn();
    const base = (await import('./support/config')).testConfig('postgres://unused');
    // The operator points LINKEDIN_API_BASE_URL / LINKEDIN_OAUTH_BASE_URL at the fake, as a
    // self-hosted test setup does: accounts cannot choose endpoints of their own.
    // A total request timeout of 5 s: the deadline tests below trickle answers one byte a second
    // past it (the fixture's 20 s would make them slow), and it leaves a loaded machine time for
    // the fake's ordinary answers.
    const fast = fastEngine();
    t = await bootEngine({
      http: { ...fast.http!, totalTimeoutMs: 5_000 },
      linkedin: {
        ...base.linkedin,
        clientId: fake.clientId,
        clientSecret: fake.clientSecret,
        apiVersion: NEWEST_LINKEDIN_VERSION,
        apiBaseUrl: fake.url,
        oauthBaseUrl: fake.url,
      },
    });
    key = t.adminKey;
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  async function account(config: Record<string, unknown> = {}): Promise<string> {
    const res = await t
      .http()
      .post('/v1/accounts')
      .set(bearer(key))
      .send({
        provider: 'linkedin',
        name: `LinkedIn ${++n}`,
        config: { accessToken: fake.issueToken(), authorUrn: fake.authorUrn, ...config },
      });
    if (res.status !== 201) throw new Error(`account creation failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id as string;
  }

  /** Unique text per test: the fake refuses repeats as DUPLICATE_POST, like LinkedIn. */
  const text = (s: string) => `${s} [${++n}]`;

  async function publish(accountId: string, body: Record<string, unknown>, done: (j: Job) => boolean): Promise<Job> {
    const post = await createPost(t, key, { targets: [{ accountId }], ...body });
    return waitForJob<Job>(t, key, post.jobs[0].id, done);
  }
  const finished = (j: Job) => ['succeeded', 'dead', 'paused'].includes(j.status);

  it('creates the account without echoing tokens, and verifies the token against /v2/userinfo', async () => {
    const token = fake.issueToken();
    const id = await account({ accessToken: token });
    const got = await t.http().get(`/v1/accounts/${id}`).set(bearer(key)).expect(200);
    expect(got.body.config).toEqual({ authorUrn: fake.authorUrn, hasRefreshToken: false, tokenExpiresAt: null });
    expect(JSON.stringify(got.body)).not.toContain(token);
    const verified = await t.http().post(`/v1/accounts/${id}/verify`).set(bearer(key)).expect(200);
    expect(verified.body).toMatchObject({ ok: true });
    const wrong = await account({ authorUrn: 'urn:li:person:someoneElse' });
    const refused = await t.http().post(`/v1/accounts/${wrong}/verify`).set(bearer(key)).expect(200);
    expect(refused.body.ok).toBe(false);
    expect(refused.body.message).toMatch(/belongs to urn:li:person:aB3dE5fG7h, not to the configured authorUrn/);
  });

  it('publishes text with the required headers, escaped commentary and an article, and records the URN from x-restli-id', async () => {
    const id = await account();
    const body = text('Release (v2) is out! #launch cc @team [docs] *bold* <tag> a_b ~x~ {y} | \\ #');
    const job = await publish(id, { text: body, link: 'https://example.com/release', title: 'Release notes' }, finished);
    expect(job.status).toBe('succeeded');
    const post = fake.posts.find((p) => fromLittleText(p.body.commentary as string) === body)!;
    expect(post).toBeDefined();
    expect(job.remoteId).toBe(post.urn);
    expect(job.remoteUrl).toBe(`https://www.linkedin.com/feed/update/${post.urn}/`);
    expect(post.body).toMatchObject({
      author: fake.authorUrn,
      visibility: 'PUBLIC',
      distribution: { feedDistribution: 'MAIN_FEED', targetEntities: [], thirdPartyDistributionChannels: [] },
      lifecycleState: 'PUBLISHED',
      content: { article: { source: 'https://example.com/release', title: 'Release notes' } },
    });
    expect(post.body.commentary).toContain(
      'Release \\(v2\\) is out! {hashtag|\\#|launch} cc \\@team \\[docs\\] \\*bold\\* \\<tag\\> a\\_b \\~x\\~ \\{y\\} \\| \\\\ \\#',
    );
    const call = fake.calls('posts').at(-1)!;
    expect(call.headers['linkedin-version']).toBe(NEWEST_LINKEDIN_VERSION);
    expect(call.headers['x-restli-protocol-version']).toBe('2.0.0');
  });

  it('the fake enforces the versioned headers (400 without them), as LinkedIn does', async () => {
    const token = fake.issueToken();
    const noVersion = await fetch(`${fake.url}/rest/posts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'x-restli-protocol-version': '2.0.0' },
      body: '{}',
    });
    expect(noVersion.status).toBe(400);
    expect(((await noVersion.json()) as { code: string }).code).toBe('VERSION_MISSING');
    const noProtocol = await fetch(`${fake.url}/rest/posts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'linkedin-version': NEWEST_LINKEDIN_VERSION },
      body: '{}',
    });
    expect(noProtocol.status).toBe(400);
  });

  it('uploads one image through the Images API and posts it as content.media with its alt text', async () => {
    const id = await account();
    const bytes = await makeImage('png', 60, 40);
    const media = await uploadImage(t, key, bytes, 'a red rectangle');
    const job = await publish(id, { text: text('one image'), media: [media] }, finished);
    expect(job.status).toBe('succeeded');
    const post = fake.posts.find((p) => p.urn === job.remoteId)!;
    const content = post.body.content as { media: { id: string; altText: string } };
    expect(content.media.altText).toBe('a red rectangle');
    expect(Buffer.compare(fake.images.get(content.media.id)!.bytes!, bytes)).toBe(0);
    const init = fake.calls('initializeUpload').at(-1)!;
    expect(JSON.parse(init.body.toString())).toEqual({ initializeUploadRequest: { owner: fake.authorUrn } });
  });

  it('posts several images as content.multiImage, converting WebP to a type LinkedIn accepts', async () => {
    const id = await account();
    const a = await uploadImage(t, key, await makeImage('jpeg'), 'first');
    const b = await uploadImage(t, key, await makeImage('webp'), 'second');
    const job = await publish(id, { text: text('two images'), media: [a, b], link: 'https://example.com/x' }, finished);
    expect(job.status).toBe('succeeded');
    const post = fake.posts.find((p) => p.urn === job.remoteId)!;
    const images = (post.body.content as { multiImage: { images: { id: string; altText: string }[] } }).multiImage.images;
    expect(images.map((i) => i.altText)).toEqual(['first', 'second']);
    const second = fake.images.get(images[1].id)!.bytes!;
    expect(second.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff])); // JPEG now
    // One content per post: the link stays in the text.
    expect(fromLittleText(post.body.commentary as string)).toMatch(/\n\nhttps:\/\/example\.com\/x$/);
  });

  /** `n` distinct images (each its own width) uploaded to Herald, with their bytes and alt text. */
  async function images(n: number, label: string): Promise<{ id: string; bytes: Buffer; alt: string }[]> {
    const out: { id: string; bytes: Buffer; alt: string }[] = [];
    for (let i = 0; i < n; i++) {
      const bytes = await makeImage('png', 20 + i, 12);
      const alt = `${label} ${i + 1} of ${n}`;
      out.push({ id: await uploadImage(t, key, bytes, alt), bytes, alt });
    }
    return out;
  }

  /** The post's multiImage as LinkedIn stored it: each image's alt text and the bytes uploaded for it. */
  function multiImage(urn: string | null): { altText: string; bytes: Buffer }[] {
    const post = fake.posts.find((p) => p.urn === urn)!;
    const content = post.body.content as { multiImage: { images: { id: string; altText: string }[] } };
    return content.multiImage.images.map((i) => ({ altText: i.altText, bytes: fake.images.get(i.id)!.bytes! }));
  }

  it('publishes 2 images and 20 images as multi-image posts: in the post order, each with its alt text and its own upload', async () => {
    const id = await account();
    for (const n of [2, 20]) {
      const given = await images(n, 'photo');
      const uploadsBefore = fake.calls('initializeUpload').length;
      const job = await publish(id, { text: text(`${n} photos`), media: given.map((g) => g.id) }, finished);
      expect(job.status).toBe('succeeded');
      expect(job.attempts).toHaveLength(1);
      expect(fake.calls('initializeUpload').length - uploadsBefore).toBe(n);
      const posted = multiImage(job.remoteId);
      expect(posted.map((p) => p.altText)).toEqual(given.map((g) => g.alt));
      expect(posted.every((p, i) => p.bytes.equals(given[i].bytes))).toBe(true);
    }
  });

  it('refuses 21 images at intake with a 400 naming the limit, and writes nothing; past intake, the connector uploads none', async () => {
    const id = await account();
    const given = await images(21, 'too many');
    const count = () =>
      withClient(t.databaseUrl, async (db) => (await db.query('SELECT count(*)::int AS n FROM posts')).rows[0].n as number);
    const before = await count();
    const res = await t
      .http()
      .post('/v1/posts')
      .set(bearer(key))
      .send({ text: text('21 photos'), media: given.map((g) => g.id), targets: [{ accountId: id }] });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(
      "media has 21 images; a post takes at most 20 (the most any platform takes; each target's platform may take fewer)",
    );
    expect(await count()).toBe(before);
    // Twenty of them go.
    const ok = await t
      .http()
      .post('/v1/posts')
      .set(bearer(key))
      .send({ text: text('20 photos'), media: given.slice(0, 20).map((g) => g.id), targets: [{ accountId: id }], status: 'draft' });
    expect(ok.status).toBe(201);

    // A payload that never went through intake (none does; a bug could) is poison before any upload.
    const stored: DeliveryAccount = {
      id: randomUUID(),
      workspaceId: randomUUID(),
      name: 'past intake',
      config: { authorUrn: fake.authorUrn, tokenExpiresAt: null, hasRefreshToken: false },
      credentials: { accessToken: fake.issueToken(), refreshToken: null, expiresAt: null },
    };
    const job = deliveryJob(text('21 photos, past intake'));
    const media = Array.from({ length: 21 }, () => ({
      id: randomUUID(),
      alt: 'a photo',
      mimeType: 'image/png',
      width: 20,
      height: 12,
      byteSize: 3,
      url: 'http://127.0.0.1:9/unused',
      read: () => Promise.reject(new Error('no image may be read')),
    }));
    const uploadsBefore = fake.calls('initializeUpload').length;
    const outcome = await t.app
      .get(LinkedInConnector)
      .deliver({ ...job, payload: { ...job.payload, media: media.map((m) => m.id) }, media }, stored, new AbortController().signal);
    expect(outcome).toMatchObject({ errorClass: 'poison', message: 'LinkedIn takes at most 20 images per post (this one has 21)' });
    expect(fake.calls('initializeUpload').length).toBe(uploadsBefore);
  });

  it('a retry after a failed create uploads the images again, as it does for one image, and publishes one multi-image post', async () => {
    const id = await account();
    const given = await images(3, 'retried');
    const uploadsBefore = fake.calls('initializeUpload').length;
    fake.fail('posts', { status: 500, body: { message: 'Internal Server Error', status: 500 } });
    const body = text('three photos, second try');
    const job = await publish(id, { text: body, media: given.map((g) => g.id) }, finished);
    expect(job.status).toBe('succeeded');
    expect(job.attempts.map((a) => [a.httpStatus, a.errorClass])).toEqual([
      [500, 'transient'],
      [201, 'success'],
    ]);
    // Each attempt uploaded the three images (LinkedIn's image URNs are not kept between attempts).
    expect(fake.calls('initializeUpload').length - uploadsBefore).toBe(6);
    expect(fake.posts.filter((p) => fromLittleText(p.body.commentary as string) === body)).toHaveLength(1);
    expect(multiImage(job.remoteId).map((p) => p.altText)).toEqual(given.map((g) => g.alt));
  });

  it('the fake checks multiImage as LinkedIn documents it: 2 to 20 image URNs, each uploaded by the author', async () => {
    const token = fake.issueToken();
    const upload = async (): Promise<string> => {
      const init = await fetch(`${fake.url}/rest/images?action=initializeUpload`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'linkedin-version': NEWEST_LINKEDIN_VERSION, 'x-restli-protocol-version': '2.0.0' },
        body: JSON.stringify({ initializeUploadRequest: { owner: fake.authorUrn } }),
      });
      const { value } = (await init.json()) as { value: { uploadUrl: string; image: string } };
      await fetch(value.uploadUrl, { method: 'PUT', headers: { authorization: `Bearer ${token}` }, body: new Uint8Array([1, 2, 3]) });
      return value.image;
    };
    const post = (content: unknown) =>
      fetch(`${fake.url}/rest/posts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'linkedin-version': NEWEST_LINKEDIN_VERSION, 'x-restli-protocol-version': '2.0.0' },
        body: JSON.stringify({
          author: fake.authorUrn,
          commentary: text('fake check'),
          visibility: 'PUBLIC',
          distribution: { feedDistribution: 'MAIN_FEED', targetEntities: [], thirdPartyDistributionChannels: [] },
          lifecycleState: 'PUBLISHED',
          content,
        }),
      });
    const ids = await Promise.all(Array.from({ length: 21 }, upload));
    const images = (n: number) => ids.slice(0, n).map((id) => ({ id, altText: 'alt' }));
    const refused = async (content: unknown, message: RegExp, status = 422) => {
      const res = await post(content);
      expect(res.status).toBe(status);
      expect(((await res.json()) as { message: string }).message).toMatch(message);
    };
    await refused({ multiImage: { images: images(1) } }, /1 images, a multi-image post takes 2 to 20/);
    await refused({ multiImage: { images: images(21) } }, /21 images, a multi-image post takes 2 to 20/);
    await refused({ multiImage: { images: [...images(1), { id: 'urn:li:video:C5D1', altText: 'x' }] } }, /is not an image URN/);
    await refused({ multiImage: { images: images(2) }, article: { source: 'https://example.com' } }, /exactly one content type/);
    await refused({ multiImage: { images: [...images(1), { id: 'urn:li:image:C4Dnever', altText: 'x' }] } }, /has not been uploaded/, 400);
    expect((await post({ multiImage: { images: images(20) } })).status).toBe(201);
  });

  it('refreshes once after a 401 and succeeds, storing the new token for later attempts', async () => {
    const token = fake.issueToken();
    const id = await account({ accessToken: token, refreshToken: fake.issueRefreshToken() });
    fake.expire(token);
    const before = fake.calls('token').length;
    const job = await publish(id, { text: text('after refresh') }, finished);
    expect(job.status).toBe('succeeded');
    expect(job.attempts).toHaveLength(1);
    expect(fake.calls('token').length).toBe(before + 1);
    const post = fake.posts.find((p) => p.urn === job.remoteId)!;
    expect(post.token).not.toBe(token);
    // The next post uses the stored new token: no second refresh.
    const again = await publish(id, { text: text('second post') }, finished);
    expect(again.status).toBe('succeeded');
    expect(fake.calls('token').length).toBe(before + 1);
  });

  it('refreshes ahead of expiry when the token expires within 5 minutes', async () => {
    const token = fake.issueToken();
    const id = await account({
      accessToken: token,
      refreshToken: fake.issueRefreshToken(),
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
    });
    const before = fake.calls('token').length;
    const job = await publish(id, { text: text('proactive') }, finished);
    expect(job.status).toBe('succeeded');
    expect(job.attempts).toHaveLength(1);
    expect(fake.calls('token').length).toBe(before + 1);
    // The old token still works at LinkedIn: the post used the new one because it was refreshed first.
    expect(fake.posts.find((p) => p.urn === job.remoteId)!.token).not.toBe(token);
  });

  it('a 401 without a refresh token, or with a refused one, is auth: the account needs re-authentication', async () => {
    const token = fake.issueToken();
    const id = await account({ accessToken: token });
    fake.expire(token);
    const job = await publish(id, { text: text('expired') }, (j) => j.status === 'paused');
    expect(job.attempts[0]).toMatchObject({ httpStatus: 401, errorClass: 'auth' });
    const acc = await t.http().get(`/v1/accounts/${id}`).set(bearer(key)).expect(200);
    expect(acc.body.status).toBe('needs_reauth');

    const token2 = fake.issueToken();
    const id2 = await account({ accessToken: token2, refreshToken: 'AQXrevoked' });
    fake.expire(token2);
    const job2 = await publish(id2, { text: text('refused refresh') }, (j) => j.status === 'paused');
    expect(job2.attempts[0]).toMatchObject({ errorClass: 'auth' });
    expect(job2.lastError).toMatch(/refused the refresh token/);
    expect(JSON.stringify(job2)).not.toContain('AQXrevoked');
  });

  it('422 DUPLICATE_POST on a first attempt is permanent (the content was posted before)', async () => {
    const id = await account();
    const body = text('said twice');
    expect((await publish(id, { text: body }, finished)).status).toBe('succeeded');
    const job = await publish(id, { text: body }, finished);
    expect(job).toMatchObject({ status: 'dead', deadReason: 'permanent', errorClass: 'permanent' });
    expect(job.attempts).toHaveLength(1);
    expect(job.lastError).toMatch(/duplicate of urn:li:share:\d+/);
  });

  it('422 DUPLICATE_POST after an attempt whose answer was lost is success with the URN from the message', async () => {
    const id = await account();
    fake.fail('posts', 'create-then-reset');
    const job = await publish(id, { text: text('answer lost') }, finished);
    expect(job.status).toBe('succeeded');
    expect(job.attempts).toHaveLength(2);
    expect(job.attempts[0]).toMatchObject({ errorClass: 'transient', httpStatus: null });
    expect(job.attempts[0].networkError).not.toBeNull();
    expect(job.attempts[1]).toMatchObject({ errorClass: 'success', httpStatus: 422 });
    const created = fake.posts.filter((p) => fromLittleText(p.body.commentary as string).startsWith('answer lost'));
    expect(created).toHaveLength(1);
    expect(job.remoteId).toBe(created[0].urn);
  });

  it('426 NONEXISTENT_VERSION is permanent and tells the operator to update LINKEDIN_VERSION', async () => {
    const id = await account();
    fake.activeVersions.delete(NEWEST_LINKEDIN_VERSION);
    try {
      const job = await publish(id, { text: text('old version') }, finished);
      expect(job).toMatchObject({ status: 'dead', deadReason: 'permanent' });
      expect(job.attempts[0].httpStatus).toBe(426);
      expect(job.lastError).toMatch(new RegExp(`no longer serves API version ${NEWEST_LINKEDIN_VERSION} .*set LINKEDIN_VERSION`));
    } finally {
      fake.activeVersions.add(NEWEST_LINKEDIN_VERSION);
    }
  });

  it('429 and 5xx are transient: retried with backoff until the post goes through', async () => {
    const id = await account();
    fake.fail(
      'posts',
      { status: 429, body: { message: 'Resource level throttle limit exceeded', status: 429 } },
      { status: 500, body: { message: 'Internal Server Error', status: 500 } },
    );
    const job = await publish(id, { text: text('throttled') }, finished);
    expect(job.status).toBe('succeeded');
    expect(job.attempts.map((a) => [a.httpStatus, a.errorClass])).toEqual([
      [429, 'transient'],
      [500, 'transient'],
      [201, 'success'],
    ]);
  });

  it('a failed image upload is classified like any LinkedIn answer, and retried', async () => {
    const id = await account();
    const media = await uploadImage(t, key, await makeImage('png'), 'alt');
    fake.fail('initializeUpload', { status: 503 });
    const job = await publish(id, { text: text('upload hiccup'), media: [media] }, finished);
    expect(job.status).toBe('succeeded');
    expect(job.attempts[0]).toMatchObject({ httpStatus: 503, errorClass: 'transient' });
  });

  it('flags an account whose token cannot be refreshed from 7 days before it expires', async () => {
    const soon = new Date(Date.now() + 3 * 86_400_000).toISOString();
    const id = await account({ expiresAt: soon });
    const got = await t.http().get(`/v1/accounts/${id}`).set(bearer(key)).expect(200);
    expect(got.body.config.tokenExpiresAt).toBe(soon);
    expect(got.body.warnings).toEqual([expect.stringMatching(/^the access token expires on .* \(in 3 days\) and cannot be refreshed/)]);
    const later = await account({ expiresAt: new Date(Date.now() + 30 * 86_400_000).toISOString() });
    expect((await t.http().get(`/v1/accounts/${later}`).set(bearer(key))).body.warnings).toEqual([]);
  });

  describe('where tokens and the client secret go', () => {
    let elsewhere: Receiver;
    beforeAll(async () => {
      elsewhere = await startReceiver(() => ({ status: 200, body: { access_token: 'stolen', expires_in: 60 } }));
    });
    afterAll(async () => {
      await elsewhere.close();
    });

    it.each(['oauthBaseUrl', 'apiBaseUrl'])(
      "refuses %s in an account's config with a 400 naming the field, and creates nothing",
      async (field) => {
        const before = (await t.http().get('/v1/accounts?limit=200').set(bearer(key)).expect(200)).body.data.length as number;
        const res = await t
          .http()
          .post('/v1/accounts')
          .set(bearer(key))
          .send({
            provider: 'linkedin',
            name: 'Mine',
            config: {
              accessToken: fake.issueToken(),
              refreshToken: fake.issueRefreshToken(),
              authorUrn: fake.authorUrn,
              [field]: elsewhere.url,
            },
          });
        expect(res.status).toBe(400);
        expect(res.body.message).toContain(`config.${field} is not accepted`);
        expect(res.body.message).toMatch(/LINKEDIN_(API|OAUTH)_BASE_URL/);
        const after = (await t.http().get('/v1/accounts?limit=200').set(bearer(key)).expect(200)).body.data.length as number;
        expect(after).toBe(before);
      },
    );

    it("refreshes at the operator's endpoint even for an account whose stored config names another; that server never hears from Herald", async () => {
      const token = fake.issueToken();
      fake.expire(token);
      const account: DeliveryAccount = {
        id: randomUUID(),
        workspaceId: randomUUID(),
        name: 'stored before the fix',
        // What an account saved by an older Herald could hold (the migration removes it from the database).
        config: {
          authorUrn: fake.authorUrn,
          apiBaseUrl: elsewhere.url,
          oauthBaseUrl: elsewhere.url,
          tokenExpiresAt: null,
          hasRefreshToken: true,
        },
        credentials: { accessToken: token, refreshToken: fake.issueRefreshToken(), expiresAt: null },
      };
      const before = fake.calls('token').length;
      const outcome = await t.app
        .get(LinkedInConnector)
        .deliver(deliveryJob(text('refresh stays home')), account, new AbortController().signal);
      expect(outcome.errorClass).toBe('success');
      expect(fake.calls('token').length).toBe(before + 1);
      expect(fake.calls('token').at(-1)!.body.toString()).toContain(`client_secret=${fake.clientSecret}`);
      expect(elsewhere.requests).toHaveLength(0);
    });

    it('the migration removes stored endpoint overrides and the database refuses new ones', async () => {
      await withClient(t.databaseUrl, async (db) => {
        const runner = { query: (sql: string) => db.query(sql).then((r) => r.rows) } as unknown as QueryRunner;
        const migration = new LinkedInOperatorEndpoints1764510000000();
        const ws = (await db.query<{ workspace_id: string }>('SELECT workspace_id FROM api_keys LIMIT 1')).rows[0].workspace_id;
        await migration.down(runner);
        const insert = (provider: string, config: object) =>
          db.query<{ id: string }>(
            `INSERT INTO accounts (workspace_id, provider, name, config, credentials) VALUES ($1, $2, 'old', $3, 'sealed') RETURNING id`,
            [ws, provider, JSON.stringify(config)],
          );
        const old = (await insert('linkedin', { authorUrn: fake.authorUrn, apiBaseUrl: elsewhere.url, oauthBaseUrl: elsewhere.url }))
          .rows[0].id;
        const hook = (await insert('webhook', { url: 'https://blog.example/hook', oauthBaseUrl: 'unrelated' })).rows[0].id;
        await migration.up(runner);
        const rows = (
          await db.query<{ id: string; config: Record<string, unknown> }>('SELECT id, config FROM accounts WHERE id = ANY($1)', [
            [old, hook],
          ])
        ).rows;
        expect(rows.find((r) => r.id === old)!.config).toEqual({ authorUrn: fake.authorUrn });
        // Only LinkedIn accounts are touched.
        expect(rows.find((r) => r.id === hook)!.config).toMatchObject({ oauthBaseUrl: 'unrelated' });
        await expect(insert('linkedin', { authorUrn: fake.authorUrn, oauthBaseUrl: elsewhere.url })).rejects.toThrow(
          /accounts_linkedin_operator_endpoints/,
        );
        await db.query('DELETE FROM accounts WHERE id = ANY($1)', [[old, hook]]);
      });
    });
  });

  describe('deadlines', () => {
    it('a LinkedIn that sends its headers and then trickles the body one byte a second is cut off at the total timeout as transient, then retried', async () => {
      const id = await account();
      const media = await uploadImage(t, key, await makeImage('png'), 'slow');
      // One byte every second never lets an idle timeout fire; the total timeout (5 s here) does:
      // the first attempt says which one ended it.
      fake.fail('initializeUpload', { trickleMs: 1_000 });
      const job = await publish(id, { text: text('slow upload answer'), media: [media] }, finished);
      expect(job.status).toBe('succeeded');
      expect(job.attempts[0]).toMatchObject({ errorClass: 'transient', httpStatus: null, networkError: 'total_timeout' });
      expect(job.attempts[1]).toMatchObject({ errorClass: 'success', httpStatus: 201 });
    });

    it('a LinkedIn that trickles its whole answer after creating the post: cut at the total timeout, and the retry finds the post', async () => {
      const id = await account();
      fake.fail('posts', { trickleMs: 1_000 });
      const job = await publish(id, { text: text('slow answer') }, finished);
      expect(job.status).toBe('succeeded');
      expect(job.attempts[0]).toMatchObject({ errorClass: 'transient', httpStatus: null, networkError: 'total_timeout' });
      // The first attempt created the post before its answer stalled: the retry's 422 DUPLICATE_POST is that post.
      expect(job.attempts[1]).toMatchObject({ errorClass: 'success', httpStatus: 422 });
      expect(fake.posts.filter((p) => p.urn === job.remoteId)).toHaveLength(1);
    });

    it("ends every call of an attempt at the attempt's deadline (its signal) as transient attempt_deadline", async () => {
      // A total timeout far longer than the attempt's deadline: the signal is what stops the call.
      const patient = new LinkedInConnector({ ...t.config, http: { ...t.config.http, totalTimeoutMs: 60_000 } });
      const account: DeliveryAccount = {
        id: randomUUID(),
        workspaceId: randomUUID(),
        name: 'deadline',
        config: { authorUrn: fake.authorUrn, tokenExpiresAt: null, hasRefreshToken: false },
        credentials: { accessToken: fake.issueToken(), refreshToken: null, expiresAt: null },
      };
      fake.fail('posts', { trickleMs: 1_000 });
      const started = Date.now();
      const outcome = await patient.deliver(deliveryJob(text('deadline')), account, AbortSignal.timeout(1_500));
      // The signal ended it (not the 60 s total timeout: the outcome names which), and not before its deadline.
      expect(outcome).toMatchObject({ errorClass: 'transient', networkError: 'attempt_deadline', httpStatus: null });
      expect(outcome.message).toMatch(/reached its deadline/);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    });
  });

  function deliveryJob(body: string): DeliveryJob {
    return {
      id: randomUUID(),
      postId: randomUUID(),
      accountId: randomUUID(),
      workspaceId: randomUUID(),
      idempotencyKey: randomUUID(),
      attemptNumber: 1,
      payload: { text: body, title: null, link: null, media: [], metadata: null, scheduledAt: new Date().toISOString() },
      media: [],
      previousAttempt: null,
    };
  }
});
