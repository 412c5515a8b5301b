import type { AppBskyEmbedExternal, AppBskyEmbedImages, AppBskyFeedPost } from '@atproto/api';
import * as http from 'node:http';
import type * as net from 'node:net';
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import sharp from 'sharp';
import { openCredentials } from '../src/accounts/account-credentials';
import { SecretBox } from '../src/common/crypto/secret-box';
import { BlueskyConnector } from '../src/connectors/bluesky/bluesky.connector';
import type { DeliveryAccount, DeliveryJob } from '../src/connectors/connector.interface';
import { TestApp } from './support/app';
import { bootEngine, createPost, waitForJob } from './support/engine';
import { startPds, TestBskyAccount, TestPdsHandle } from './support/pds';
import { startXrpcProxy, XrpcProxy } from './support/xrpc-proxy';
import { bearer, fastEngine } from './support/config';

/**
 * The Bluesky connector end to end: Herald's API and worker against a real PDS started in-process
 * from @atproto/dev-env (PDS 0.4, rate limits on), with a loopback proxy in between that counts
 * XRPC calls and can lose answers. Posts are read back with com.atproto.repo.* (no app view runs).
 */

const CREATE_SESSION = 'com.atproto.server.createSession';
const CREATE_RECORD = 'com.atproto.repo.createRecord';

interface Job {
  id: string;
  status: string;
  attemptCount: number;
  nextAttemptAt: string | null;
  errorClass: string | null;
  lastError: string | null;
  remoteId: string | null;
  remoteUrl: string | null;
  attempts: { errorClass: string; httpStatus: number | null; networkError: string | null; retryAt: string | null }[];
}

/** Random pixels compress badly: a PNG of them is well over Bluesky's 1,000,000-byte blob limit. */
async function noisyPng(width: number, height: number): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3);
  for (let i = 0; i < pixels.length; i++) pixels[i] = ((i * 2654435761) >>> 24) ^ (i & 0xff);
  return sharp(pixels, { raw: { width, height, channels: 3 } })
    .png({ compressionLevel: 0 })
    .toBuffer();
}

async function smallJpeg(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 30, g: 120, b: 200 } } })
    .jpeg()
    .toBuffer();
}

function byteRange(text: string, part: string): { byteStart: number; byteEnd: number } {
  const at = text.indexOf(part);
  if (at < 0) throw new Error(`"${part}" not in text`);
  const byteStart = Buffer.byteLength(text.slice(0, at), 'utf8');
  return { byteStart, byteEnd: byteStart + Buffer.byteLength(part, 'utf8') };
}

/** A loopback web page with Open Graph tags and a large preview image. */
async function startPage(image: Buffer): Promise<{ url: string; imageRequests: () => number; close(): Promise<void> }> {
  let imageRequests = 0;
  const server = http.createServer((req, res) => {
    const base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    if (req.url === '/card.png') {
      imageRequests += 1;
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': image.length }).end(image);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><html><head>
      <title>not this</title>
      <meta property="og:title" content="Herald &amp; the launch">
      <meta property="og:description" content="Everything we shipped 🚀">
      <meta property="og:image" content="${base}/card.png">
    </head><body>hello</body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/launch`,
    imageRequests: () => imageRequests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('Bluesky connector against a real PDS', () => {
  let pds: TestPdsHandle;
  let proxy: XrpcProxy;
  let t: TestApp;
  let key: string;

  beforeAll(async () => {
    pds = await startPds({ rateLimitsEnabled: true });
    proxy = await startXrpcProxy(pds.url);
    // The PDS answers in milliseconds on a quiet machine, but has taken over 6 s per call on one
    // loaded by other test runs; the fixture's 3 s request timeout then made attempts transient
    // failures these tests do not expect. Nothing here is about timeouts: 20 s, as in production.
    const fast = fastEngine();
    t = await bootEngine({ allowPrivateUrls: true, http: { ...fast.http!, totalTimeoutMs: 20_000 } });
    key = t.adminKey;
  });

  afterAll(async () => {
    await t?.close();
    await proxy?.close();
    await pds?.close();
  });

  async function connect(account: TestBskyAccount): Promise<string> {
    const res = await t
      .http()
      .post('/v1/accounts')
      .set(bearer(key))
      .send({
        provider: 'bluesky',
        name: account.handle,
        config: { identifier: account.handle, appPassword: account.appPassword, service: proxy.url },
      });
    expect(res.status).toBe(201);
    expect(res.body.config).toEqual({ identifier: account.handle, service: proxy.url });
    expect(JSON.stringify(res.body)).not.toContain(account.appPassword);
    return res.body.id as string;
  }

  /** The account as the worker hands it to the connector: config and decrypted credentials. */
  async function storedAccount(accountId: string): Promise<DeliveryAccount> {
    const db = new Client({ connectionString: t.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query('SELECT workspace_id, name, config, credentials FROM accounts WHERE id = $1', [accountId]);
      const row = rows[0] as { workspace_id: string; name: string; config: Record<string, unknown>; credentials: string };
      const box = new SecretBox(t.config.secretKey);
      return {
        id: accountId,
        workspaceId: row.workspace_id,
        name: row.name,
        config: row.config,
        credentials: openCredentials(box, accountId, row.credentials),
      };
    } finally {
      await db.end();
    }
  }

  function deliveryJob(accountId: string, text: string): DeliveryJob {
    return {
      id: randomUUID(),
      postId: randomUUID(),
      accountId,
      workspaceId: 'ws',
      idempotencyKey: randomUUID(),
      attemptNumber: 1,
      payload: { text, title: null, link: null, media: [], metadata: null, scheduledAt: new Date().toISOString() },
      media: [],
      previousAttempt: null,
    };
  }

  async function uploadMedia(bytes: Buffer, filename: string, alt: string): Promise<string> {
    const res = await t.http().post('/v1/media').set(bearer(key)).field('alt', alt).attach('file', bytes, filename);
    expect(res.status).toBe(201);
    return res.body.id as string;
  }

  async function readPost(account: TestBskyAccount, uri: string): Promise<AppBskyFeedPost.Record> {
    const rkey = uri.split('/').pop() ?? '';
    const res = await pds.network.pds.getAgent().com.atproto.repo.getRecord({ repo: account.did, collection: 'app.bsky.feed.post', rkey });
    return res.data.value as AppBskyFeedPost.Record;
  }

  async function listPosts(account: TestBskyAccount): Promise<{ uri: string; value: AppBskyFeedPost.Record }[]> {
    const res = await pds.network.pds
      .getAgent()
      .com.atproto.repo.listRecords({ repo: account.did, collection: 'app.bsky.feed.post', limit: 100 });
    return res.data.records.map((r) => ({ uri: r.uri, value: r.value as AppBskyFeedPost.Record }));
  }

  async function blobSize(did: string, cid: string): Promise<number> {
    const res = await fetch(`${pds.url}/xrpc/com.atproto.sync.getBlob?did=${did}&cid=${cid}`);
    return (await res.arrayBuffer()).byteLength;
  }

  it('publishes text with emoji, a link, a mention and a hashtag as facets with UTF-8 byte offsets, and two images with alt text', async () => {
    const author = await pds.createAccount('author');
    const friend = await pds.createAccount('friend');
    const accountId = await connect(author);
    const big = await noisyPng(1000, 700);
    expect(big.length).toBeGreaterThan(1_000_000);
    const media = [
      await uploadMedia(big, 'big.png', 'A very noisy sunset'),
      await uploadMedia(await smallJpeg(300, 200), 'small.jpg', 'A blue square'),
    ];
    const link = 'https://example.com/launch?utm=1';
    const text = `Launch day 🚀👩‍👩‍👧 with @${friend.handle} and @nobody-here.test #herald ✨ ${link}`;
    const post = await createPost(t, key, {
      text,
      link,
      media,
      targets: [{ accountId }],
      scheduledAt: new Date(Date.now() + 300).toISOString(),
    });
    const job = await waitForJob<Job>(t, key, post.jobs[0].id, (j) => j.status !== 'scheduled' && j.status !== 'in_progress');
    expect(job).toMatchObject({ status: 'succeeded', errorClass: 'success' });
    const rkey = job.remoteId?.split('/').pop() ?? '';
    expect(job.remoteId).toBe(`at://${author.did}/app.bsky.feed.post/${rkey}`);
    expect(job.remoteUrl).toBe(`https://bsky.app/profile/${author.handle}/post/${rkey}`);

    const record = await readPost(author, job.remoteId ?? '');
    expect(record.text).toBe(text);
    const facets = record.facets ?? [];
    const simple = facets.map((f) => ({
      index: { byteStart: f.index.byteStart, byteEnd: f.index.byteEnd },
      features: f.features.map(({ $type, ...rest }) => ({ $type, ...rest })),
    }));
    expect(simple).toEqual([
      { index: byteRange(text, `@${friend.handle}`), features: [{ $type: 'app.bsky.richtext.facet#mention', did: friend.did }] },
      // @nobody-here.test does not resolve: plain text, no facet.
      { index: byteRange(text, '#herald'), features: [{ $type: 'app.bsky.richtext.facet#tag', tag: 'herald' }] },
      { index: byteRange(text, link), features: [{ $type: 'app.bsky.richtext.facet#link', uri: link }] },
    ]);
    // The emoji before the mention take 4 and 18 bytes: character offsets would be wrong here.
    expect(byteRange(text, `@${friend.handle}`).byteStart).not.toBe(text.indexOf(`@${friend.handle}`));

    const embed = record.embed as AppBskyEmbedImages.Main;
    expect(embed.$type).toBe('app.bsky.embed.images');
    expect(embed.images.map((i) => i.alt)).toEqual(['A very noisy sunset', 'A blue square']);
    expect(embed.images.map((i) => i.aspectRatio)).toEqual([
      { width: 1000, height: 700 },
      { width: 300, height: 200 },
    ]);
    for (const image of embed.images) {
      const cid = image.image.ref.toString();
      const size = await blobSize(author.did, cid);
      expect(size).toBeLessThanOrEqual(1_000_000);
      expect(image.image.size).toBe(size);
    }
    // The large PNG was recompressed to get under the limit.
    expect(embed.images[0].image.size).toBeLessThan(big.length);
  });

  it("adds a link card whose title, description and thumbnail come from the page's Open Graph tags", async () => {
    const page = await startPage(await noisyPng(1200, 630));
    try {
      const author = await pds.createAccount('carder');
      const accountId = await connect(author);
      const post = await createPost(t, key, { text: 'Read the launch notes', link: page.url, targets: [{ accountId }] });
      const job = await waitForJob<Job>(t, key, post.jobs[0].id, (j) => j.status === 'succeeded' || j.status === 'dead');
      expect(job.status).toBe('succeeded');
      const record = await readPost(author, job.remoteId ?? '');
      expect(record.text).toBe('Read the launch notes');
      const card = record.embed as AppBskyEmbedExternal.Main;
      expect(card.$type).toBe('app.bsky.embed.external');
      expect(card.external).toMatchObject({ uri: page.url, title: 'Herald & the launch', description: 'Everything we shipped 🚀' });
      expect(page.imageRequests()).toBe(1);
      const thumb = card.external.thumb;
      expect(thumb).toBeDefined();
      const size = await blobSize(author.did, thumb!.ref.toString());
      expect(size).toBeLessThanOrEqual(1_000_000);
      const meta = await sharp(
        Buffer.from(
          await (await fetch(`${pds.url}/xrpc/com.atproto.sync.getBlob?did=${author.did}&cid=${thumb!.ref.toString()}`)).arrayBuffer(),
        ),
      ).metadata();
      // Same picture, resized: the aspect ratio of the page's 1200×630 image.
      expect(Math.abs((meta.width ?? 0) / (meta.height ?? 1) - 1200 / 630)).toBeLessThan(0.01);
    } finally {
      await page.close();
    }
  });

  it('posts the link as a facet when the page cannot be fetched', async () => {
    const author = await pds.createAccount('nopage');
    const accountId = await connect(author);
    const link = 'http://127.0.0.1:9/gone';
    const post = await createPost(t, key, { text: 'Our notes', link, targets: [{ accountId }] });
    const job = await waitForJob<Job>(t, key, post.jobs[0].id, (j) => j.status === 'succeeded' || j.status === 'dead');
    expect(job.status).toBe('succeeded');
    const record = await readPost(author, job.remoteId ?? '');
    expect(record.text).toBe(`Our notes\n\n${link}`);
    expect(record.embed).toBeUndefined();
    expect(record.facets).toEqual([
      { index: byteRange(record.text, link), features: [{ $type: 'app.bsky.richtext.facet#link', uri: link }] },
    ]);
    // The person sees why the post has no card: a warning on the successful attempt.
    const detail = await t.http().get(`/v1/jobs/${job.id}`).set(bearer(key)).expect(200);
    const last = detail.body.attempts[detail.body.attempts.length - 1];
    expect(last.errorClass).toBe('success');
    expect(last.warnings).toEqual([expect.stringMatching(/link/i)]);
  });

  it('publishes 50 posts with one login', async () => {
    const author = await pds.createAccount('busy');
    const accountId = await connect(author);
    const loginsBefore = proxy.calls(CREATE_SESSION);
    const posts = await Promise.all(
      Array.from({ length: 50 }, (_, i) => createPost(t, key, { text: `Post number ${i + 1}`, targets: [{ accountId }] })),
    );
    for (const post of posts) await waitForJob<Job>(t, key, post.jobs[0].id, (j) => j.status === 'succeeded', 30_000);
    expect(proxy.calls(CREATE_SESSION) - loginsBefore).toBe(1);
    const records = await listPosts(author);
    expect(records).toHaveLength(50);
    expect(new Set(records.map((r) => r.value.text)).size).toBe(50);
    expect(t.app.get(BlueskyConnector).sessions.counters(accountId)?.logins).toBe(1);

    // Another process: a fresh connector reads the stored (encrypted) session and posts without a login.
    const stored = await storedAccount(accountId);
    expect(stored.credentials.session).toMatchObject({ did: author.did, handle: author.handle });
    const other = new BlueskyConnector(t.config);
    const out = await other.deliver(deliveryJob(accountId, 'From another process'), stored, new AbortController().signal);
    expect(out.errorClass).toBe('success');
    expect(other.sessions.counters(accountId)).toEqual({ logins: 0, refreshes: 0 });
    expect(out.credentialsUpdate).toBeUndefined();
    expect(proxy.calls(CREATE_SESSION) - loginsBefore).toBe(1);
  });

  it('refreshes a refused access token instead of logging in, and logs in again only when the refresh token is refused too', async () => {
    const author = await pds.createAccount('refresher');
    const accountId = await connect(author);
    const first = await createPost(t, key, { text: 'first', targets: [{ accountId }] });
    await waitForJob<Job>(t, key, first.jobs[0].id, (j) => j.status === 'succeeded');
    const stored = await storedAccount(accountId);
    const session = stored.credentials.session as Record<string, string>;
    const logins = proxy.calls(CREATE_SESSION);

    // Access token refused (as an expired one is): one refresh, no login, the new session handed back to store.
    const stale = { ...stored, credentials: { ...stored.credentials, session: { ...session, accessJwt: `${session.accessJwt}x` } } };
    const a = new BlueskyConnector(t.config);
    const outA = await a.deliver(deliveryJob(accountId, 'after a refresh'), stale, new AbortController().signal);
    expect(outA.errorClass).toBe('success');
    expect(a.sessions.counters(accountId)).toEqual({ logins: 0, refreshes: 1 });
    expect((outA.credentialsUpdate?.session as Record<string, string>).refreshJwt).not.toBe(session.refreshJwt);
    expect(proxy.calls(CREATE_SESSION)).toBe(logins);

    // A process holding a refresh token that is no longer accepted: the refresh fails, one login.
    const dead = {
      ...stored,
      credentials: { ...stored.credentials, session: { ...session, accessJwt: 'not-a-jwt', refreshJwt: 'not-a-jwt-either' } },
    };
    const b = new BlueskyConnector(t.config);
    const outB = await Promise.all(
      [1, 2, 3].map((n) => b.deliver(deliveryJob(accountId, `concurrent ${n}`), dead, new AbortController().signal)),
    );
    expect(outB.map((o) => o.errorClass)).toEqual(['success', 'success', 'success']);
    // Three concurrent attempts, one login (single-flight).
    expect(b.sessions.counters(accountId)?.logins).toBe(1);
    expect(proxy.calls(CREATE_SESSION)).toBe(logins + 1);
  });

  it('does not duplicate a post whose create answer was lost', async () => {
    const author = await pds.createAccount('lossy');
    const accountId = await connect(author);
    proxy.dropResponses(CREATE_RECORD, 1);
    const dropsBefore = proxy.dropped(CREATE_RECORD);
    const post = await createPost(t, key, { text: 'Exactly once, please', targets: [{ accountId }] });
    const job = await waitForJob<Job>(t, key, post.jobs[0].id, (j) => j.status === 'succeeded' || j.status === 'dead');
    expect(proxy.dropped(CREATE_RECORD) - dropsBefore).toBe(1);
    expect(job.status).toBe('succeeded');
    expect(job.attemptCount).toBe(2);
    expect(job.attempts[0]).toMatchObject({ errorClass: 'transient', httpStatus: null });
    const records = await listPosts(author);
    expect(records.map((r) => r.value.text)).toEqual(['Exactly once, please']);
    expect(job.remoteId).toBe(records[0].uri);
  });

  it('marks the account needs_reauth when its app password was revoked', async () => {
    const author = await pds.createAccount('revoked');
    const accountId = await connect(author);
    const owner = await pds.ownerAgent(author);
    await owner.com.atproto.server.revokeAppPassword({ name: author.appPasswordName });
    const post = await createPost(t, key, { text: 'Will not go out', targets: [{ accountId }] });
    const job = await waitForJob<Job>(
      t,
      key,
      post.jobs[0].id,
      (j) => j.status === 'paused' || j.status === 'dead' || j.status === 'succeeded',
    );
    expect(job).toMatchObject({ status: 'paused', errorClass: 'auth' });
    expect(job.attempts[0]).toMatchObject({ httpStatus: 401 });
    const account = await t.http().get(`/v1/accounts/${accountId}`).set(bearer(key));
    expect(account.body.status).toBe('needs_reauth');
    expect(JSON.stringify(account.body)).not.toContain(author.appPassword);
    expect(await listPosts(author)).toEqual([]);
  });

  it('defers the job until RateLimit-Reset when the PDS answers 429', async () => {
    const author = await pds.createAccount('limited');
    const accountId = await connect(author);
    // Spend the account's login budget (30 per 5 minutes) from the same address Herald uses.
    let reset: number | null = null;
    for (let i = 0; i < 40 && reset === null; i++) {
      const res = await fetch(`${pds.url}/xrpc/${CREATE_SESSION}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ identifier: author.handle, password: author.appPassword }),
      });
      if (res.status === 429) reset = Number(res.headers.get('ratelimit-reset'));
      await res.arrayBuffer();
    }
    expect(reset).not.toBeNull();
    const post = await createPost(t, key, { text: 'Later', targets: [{ accountId }] });
    const job = await waitForJob<Job>(t, key, post.jobs[0].id, (j) => j.attemptCount >= 1 && j.status === 'scheduled');
    expect(job.attempts[0]).toMatchObject({ errorClass: 'transient', httpStatus: 429 });
    const next = new Date(job.nextAttemptAt ?? 0).getTime();
    // The wait is the server's (minutes away), not the test backoff (≤ 200 ms).
    expect(Math.abs(next - reset! * 1000)).toBeLessThan(2_000);
    await t.http().delete(`/v1/posts/${post.id}`).set(bearer(key));
  });
});
