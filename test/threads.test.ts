import type { AppBskyEmbedExternal, AppBskyEmbedImages, AppBskyFeedPost } from '@atproto/api';
import * as http from 'node:http';
import type * as net from 'node:net';
import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { openCredentials } from '../src/accounts/account-credentials';
import { SecretBox } from '../src/common/crypto/secret-box';
import { BlueskyConnector } from '../src/connectors/bluesky/bluesky.connector';
import type { DeliveryAccount, DeliveryJob } from '../src/connectors/connector.interface';
import { TestApp } from './support/app';
import { withClient } from './support/database';
import { bootEngine, connectBlueskyAccount, createPost, createWebhookAccount, waitForJob } from './support/engine';
import { makeImage, uploadImage } from './support/media';
import { startPds, TestBskyAccount, TestPdsHandle } from './support/pds';
import { Receiver, startReceiver, verifySignature } from './support/receiver';
import { startXrpcProxy, XrpcProxy } from './support/xrpc-proxy';
import { bearer, fastEngine } from './support/config';

/**
 * Threads (docs/api.md "Threads") end to end: Herald's API and worker against a real PDS from
 * @atproto/dev-env behind a loopback proxy that counts XRPC calls and can lose answers, and a
 * real webhook receiver on loopback. Records are read back with com.atproto.repo.* (no app view).
 */

const CREATE_RECORD = 'com.atproto.repo.createRecord';
const POST = 'app.bsky.feed.post';

interface Part {
  part: number;
  text: string;
  published: boolean;
  remoteId: string | null;
  remoteUrl: string | null;
}

interface Job {
  id: string;
  status: string;
  attemptCount: number;
  errorClass: string | null;
  lastError: string | null;
  remoteId: string | null;
  remoteUrl: string | null;
  parts: Part[] | null;
  attempts: { errorClass: string; httpStatus: number | null; networkError: string | null; message: string | null; warnings: string[] }[];
}

interface StoredRecord {
  uri: string;
  cid: string;
  value: AppBskyFeedPost.Record;
}

/** A loopback web page with Open Graph tags and a preview image. */
async function startPage(): Promise<{ url: string; close(): Promise<void> }> {
  const image = await sharp({ create: { width: 600, height: 315, channels: 3, background: { r: 200, g: 80, b: 40 } } })
    .png()
    .toBuffer();
  const server = http.createServer((req, res) => {
    const base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    if (req.url === '/card.png') {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': image.length }).end(image);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><html><head>
      <meta property="og:title" content="The engine room">
      <meta property="og:description" content="How Herald publishes threads">
      <meta property="og:image" content="${base}/card.png">
    </head><body>engine</body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return { url: `http://127.0.0.1:${port}/engine`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('threads', () => {
  let pds: TestPdsHandle;
  let proxy: XrpcProxy;
  let t: TestApp;
  let key: string;
  let receiver: Receiver;
  let page: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    [pds, receiver, page] = await Promise.all([startPds(), startReceiver(() => 200), startPage()]);
    proxy = await startXrpcProxy(pds.url);
    const fast = fastEngine();
    // One retry is enough for what these tests lose, and a refused part must die at once.
    t = await bootEngine({ allowPrivateUrls: true, http: { ...fast.http!, totalTimeoutMs: 20_000 } });
    key = t.adminKey;
  });

  afterAll(async () => {
    await t?.close();
    await proxy?.close();
    await Promise.all([pds?.close(), receiver?.close(), page?.close()]);
  });

  function connect(account: TestBskyAccount): Promise<string> {
    return connectBlueskyAccount(t, key, account, proxy.url);
  }

  /** Every post record of the account, oldest key first, with its cid. */
  async function records(account: TestBskyAccount): Promise<StoredRecord[]> {
    const res = await pds.network.pds.getAgent().com.atproto.repo.listRecords({ repo: account.did, collection: POST, limit: 100 });
    return res.data.records
      .map((r) => ({ uri: r.uri, cid: r.cid, value: r.value as AppBskyFeedPost.Record }))
      .sort((a, b) => (a.uri < b.uri ? -1 : 1));
  }

  /** The thread as a reader follows it: each part a reply to the first and to the one before (strong refs). */
  function expectThread(found: StoredRecord[], job: Job): void {
    const byUri = new Map(found.map((r) => [r.uri, r]));
    const parts = job.parts ?? [];
    const chain = parts.map((p) => byUri.get(p.remoteId ?? '')!);
    expect(chain.every((r) => r !== undefined)).toBe(true);
    expect(chain[0].value.reply).toBeUndefined();
    chain.slice(1).forEach((r, i) => {
      expect(r.value.reply).toEqual({
        root: { uri: chain[0].uri, cid: chain[0].cid },
        parent: { uri: chain[i].uri, cid: chain[i].cid },
      });
    });
    expect(job.remoteId).toBe(chain[0].uri);
  }

  const dead = (j: Job) => ['succeeded', 'dead', 'paused'].includes(j.status);

  describe('at intake', () => {
    let webhook: string;
    let linkedin: string;
    let bluesky: string;
    const post = (body: Record<string, unknown>) => t.http().post('/v1/posts').set(bearer(key)).send(body);
    const postCount = () =>
      withClient(t.databaseUrl, async (db) => (await db.query('SELECT count(*)::int AS n FROM posts')).rows[0].n as number);

    beforeAll(async () => {
      webhook = (await createWebhookAccount(t, key, 'http://127.0.0.1:9/hook')).id;
      const li = await t
        .http()
        .post('/v1/accounts')
        .set(bearer(key))
        .send({ provider: 'linkedin', name: 'LI', config: { accessToken: 'AQVtoken', authorUrn: 'urn:li:person:abc' } });
      expect(li.status).toBe(201);
      linkedin = li.body.id;
      bluesky = await connect(await pds.createAccount('intake'));
      // Nothing here is meant to go out: the accounts are disabled, so no worker touches the posts.
      for (const id of [webhook, linkedin, bluesky]) {
        await t.http().patch(`/v1/accounts/${id}`).set(bearer(key)).send({ status: 'disabled' }).expect(200);
      }
    });

    it('refuses a thread of no further parts or more than 25, and a part that is not an object, writing nothing', async () => {
      const before = await postCount();
      const none = await post({ text: 'first', thread: [], targets: [{ accountId: webhook }] });
      expect(none.status).toBe(400);
      expect(none.body.message).toBe(
        'thread takes 1 to 25 further parts (a thread of 2 to 26 posts), this one has 0: a single post has no `thread` (PATCH takes null to drop one)',
      );
      const many = await post({
        text: 'first',
        thread: Array.from({ length: 26 }, (_, i) => ({ text: `part ${i + 2}` })),
        targets: [{ accountId: webhook }],
      });
      expect(many.status).toBe(400);
      expect(many.body.message).toBe('thread takes 1 to 25 further parts (a thread of 2 to 26 posts), this one has 26');
      const empty = await post({ text: 'first', thread: [{ text: '' }, { text: 'b' }], targets: [{ accountId: webhook }] });
      expect(empty.status).toBe(400);
      expect(empty.body.message).toMatch(/thread\.0\.text should not be empty/);
      expect(await postCount()).toBe(before);
    });

    it('accepts a thread of two (one further part) and a thread of 26 (25 further parts), as a post and as a draft', async () => {
      const two = await post({ text: 'first', thread: [{ text: 'the reply' }], targets: [{ accountId: bluesky }, { accountId: webhook }] });
      expect(two.status).toBe(201);
      expect(two.body.thread).toEqual([{ text: 'the reply', link: null, media: [] }]);
      for (const job of two.body.jobs as { parts: Part[] }[]) {
        expect(job.parts.map((p) => [p.part, p.text, p.published])).toEqual([
          [1, 'first', false],
          [2, 'the reply', false],
        ]);
      }
      const longest = await post({
        text: 'first',
        thread: Array.from({ length: 25 }, (_, i) => ({ text: `part ${i + 2}` })),
        targets: [{ accountId: bluesky }],
      });
      expect(longest.status).toBe(201);
      expect(longest.body.thread).toHaveLength(25);
      expect(longest.body.jobs[0].parts.map((p: Part) => p.part)).toEqual(Array.from({ length: 26 }, (_, i) => i + 1));
      const draft = await post({ text: 'first', status: 'draft', thread: [{ text: 'the reply' }], targets: [{ accountId: webhook }] });
      expect(draft.status).toBe(201);
      expect(draft.body).toMatchObject({ status: 'draft', thread: [{ text: 'the reply', link: null, media: [] }] });
    });

    it("checks every part against each target's platform like the first part: length, alt text, unknown media", async () => {
      const before = await postCount();
      const noAlt = await uploadImage(t, key, await makeImage('png'), '');
      const res = await post({
        text: 'first',
        thread: [{ text: 'fine' }, { text: 'x'.repeat(301) }, { text: 'picture', media: [noAlt] }],
        targets: [{ accountId: webhook }, { accountId: bluesky }],
      });
      expect(res.status).toBe(400);
      expect(res.body.message).toContain('targets.1 (bluesky): thread.1: text is 301 graphemes, the limit is 300');
      expect(res.body.message).toContain(`targets.0 (webhook): thread.2: media.0 (${noAlt}) has no alt text`);
      expect(res.body.message).toContain(`targets.1 (bluesky): thread.2: media.0 (${noAlt}) has no alt text`);
      const unknown = await post({
        text: 'first',
        thread: [{ text: 'a' }, { text: 'b', media: ['00000000-0000-4000-8000-000000000000'] }],
        targets: [{ accountId: webhook }],
      });
      expect(unknown.status).toBe(400);
      expect(unknown.body.message).toBe('thread.1.media: unknown media id 00000000-0000-4000-8000-000000000000');
      expect(await postCount()).toBe(before);
    });

    it('refuses a thread for a LinkedIn account with a 400 that says why and what to do, and accepts it elsewhere', async () => {
      const before = await postCount();
      const body = { text: 'first', thread: [{ text: 'second' }, { text: 'third' }] };
      const res = await post({ ...body, targets: [{ accountId: bluesky }, { accountId: linkedin }] });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^targets\.1 \(linkedin\): thread: LinkedIn has no threads/);
      expect(res.body.message).toMatch(/Bluesky, Mastodon or a webhook/);
      expect(await postCount()).toBe(before);

      const ok = await post({ ...body, targets: [{ accountId: bluesky }, { accountId: webhook }] });
      expect(ok.status).toBe(201);
      expect(ok.body.thread).toEqual([
        { text: 'second', link: null, media: [] },
        { text: 'third', link: null, media: [] },
      ]);
      expect(ok.body.jobs[0].parts.map((p: Part) => [p.part, p.text, p.published])).toEqual([
        [1, 'first', false],
        [2, 'second', false],
        [3, 'third', false],
      ]);
      // A single post has no parts.
      const single = await post({ text: 'alone', targets: [{ accountId: webhook }] });
      expect(single.body.thread).toBeNull();
      expect(single.body.jobs[0].parts).toBeNull();
    });
    it("replaces or drops the thread with PATCH /v1/posts while no job has started, checked like at intake; a part's image cannot be deleted while the thread may still send it", async () => {
      const image = await uploadImage(t, key, await makeImage('png'), 'described');
      const created = await post({
        text: 'first',
        thread: [{ text: 'second', media: [image] }, { text: 'third' }],
        targets: [{ accountId: bluesky }],
        scheduledAt: new Date(Date.now() + 3_600_000).toISOString(),
      });
      expect(created.status).toBe(201);
      const id = created.body.id as string;

      const inUse = await t.http().delete(`/v1/media/${image}`).set(bearer(key));
      expect(inUse.status).toBe(409);
      expect(inUse.body.message).toContain(id);

      const tooLong = await t
        .http()
        .patch(`/v1/posts/${id}`)
        .set(bearer(key))
        .send({ thread: [{ text: 'ok' }, { text: 'x'.repeat(301) }] });
      expect(tooLong.status).toBe(400);
      expect(tooLong.body.message).toMatch(/\(bluesky\): thread\.1: text is 301 graphemes, the limit is 300$/);

      const replaced = await t
        .http()
        .patch(`/v1/posts/${id}`)
        .set(bearer(key))
        .send({ thread: [{ text: 'new second' }, { text: 'new third' }, { text: 'new fourth' }] });
      expect(replaced.status).toBe(200);
      expect(replaced.body.thread.map((p: { text: string }) => p.text)).toEqual(['new second', 'new third', 'new fourth']);
      expect(replaced.body.jobs[0].parts.map((p: Part) => p.text)).toEqual(['first', 'new second', 'new third', 'new fourth']);
      // The image is no longer in the thread: it may go.
      await t.http().delete(`/v1/media/${image}`).set(bearer(key)).expect(204);

      // A thread of two is a thread too; an empty one is refused, and the post keeps its thread.
      const empty = await t.http().patch(`/v1/posts/${id}`).set(bearer(key)).send({ thread: [] });
      expect(empty.status).toBe(400);
      expect(empty.body.message).toMatch(/^thread takes 1 to 25 further parts \(a thread of 2 to 26 posts\), this one has 0/);
      const two = await t
        .http()
        .patch(`/v1/posts/${id}`)
        .set(bearer(key))
        .send({ thread: [{ text: 'only reply' }] });
      expect(two.status).toBe(200);
      expect(two.body.jobs[0].parts.map((p: Part) => p.text)).toEqual(['first', 'only reply']);

      const single = await t.http().patch(`/v1/posts/${id}`).set(bearer(key)).send({ thread: null });
      expect(single.status).toBe(200);
      expect(single.body.thread).toBeNull();
      expect(single.body.jobs[0].parts).toBeNull();
    });
  });

  it('publishes a 5-part thread with an image and a link card to Bluesky (one reply record per part) and to a webhook (one delivery)', async () => {
    const author = await pds.createAccount('threader');
    const accountId = await connect(author);
    const blog = await createWebhookAccount(t, key, receiver.urlFor('/thread'));
    const image = await uploadImage(t, key, await makeImage('png', 300, 200), 'A chart of posts per day');
    const createsBefore = proxy.calls(CREATE_RECORD);
    const post = await createPost(t, key, {
      text: 'Part one: Herald now publishes threads 🧵',
      thread: [
        { text: 'Part two, with a picture', media: [image] },
        { text: 'Part three, with a link card', link: page.url },
        { text: 'Part four' },
        { text: 'Part five, the end' },
      ],
      targets: [{ accountId }, { accountId: blog.id }],
    });
    const jobIds = await withClient(t.databaseUrl, async (db) =>
      Object.fromEntries(
        (await db.query('SELECT id, account_id FROM jobs WHERE post_id = $1', [post.id])).rows.map((r) => [r.account_id, r.id as string]),
      ),
    );

    const job = await waitForJob<Job>(t, key, jobIds[accountId], dead);
    expect(job).toMatchObject({ status: 'succeeded', attemptCount: 1 });
    expect(job.parts?.map((p) => [p.part, p.published])).toEqual([
      [1, true],
      [2, true],
      [3, true],
      [4, true],
      [5, true],
    ]);
    for (const p of job.parts ?? []) {
      const rkey = p.remoteId?.split('/').pop() ?? '';
      expect(p.remoteId).toBe(`at://${author.did}/${POST}/${rkey}`);
      expect(p.remoteUrl).toBe(`https://bsky.app/profile/${author.handle}/post/${rkey}`);
    }

    const found = await records(author);
    expect(found).toHaveLength(5);
    expect(proxy.calls(CREATE_RECORD) - createsBefore).toBe(5);
    // Record keys sort in the thread's order (the parts' keys are consecutive TIDs).
    expect(found.map((r) => r.value.text)).toEqual([
      'Part one: Herald now publishes threads 🧵',
      'Part two, with a picture',
      'Part three, with a link card',
      'Part four',
      'Part five, the end',
    ]);
    expectThread(found, job);
    const images = found[1].value.embed as AppBskyEmbedImages.Main;
    expect(images.$type).toBe('app.bsky.embed.images');
    expect(images.images.map((i) => [i.alt, i.aspectRatio])).toEqual([['A chart of posts per day', { width: 300, height: 200 }]]);
    const card = found[2].value.embed as AppBskyEmbedExternal.Main;
    expect(card.$type).toBe('app.bsky.embed.external');
    expect(card.external).toMatchObject({ uri: page.url, title: 'The engine room', description: 'How Herald publishes threads' });
    expect(card.external.thumb).toBeDefined();

    // The webhook: every part in the one delivery, signed.
    const hooked = await waitForJob<Job>(t, key, jobIds[blog.id], dead);
    expect(hooked.status).toBe('succeeded');
    expect(hooked.parts?.every((p) => p.published)).toBe(true);
    const deliveries = receiver.requests.filter((r) => r.path === '/thread');
    expect(deliveries).toHaveLength(1);
    const event = verifySignature(blog.secret, deliveries[0]) as {
      data: { text: string; thread: { text: string; link: string | null; media: { url: string; alt: string; mimeType: string }[] }[] };
    };
    expect(event.data.text).toBe('Part one: Herald now publishes threads 🧵');
    expect(event.data.thread.map((p) => [p.text, p.link, p.media.map((m) => [m.alt, m.mimeType])])).toEqual([
      ['Part two, with a picture', null, [['A chart of posts per day', 'image/png']]],
      ['Part three, with a link card', page.url, []],
      ['Part four', null, []],
      ['Part five, the end', null, []],
    ]);
    // The part's image is served at its signed URL (under PUBLIC_URL; here the app's own server).
    const signed = new URL(event.data.thread[0].media[0].url);
    const served = await t.http().get(`${signed.pathname}${signed.search}`);
    expect(served.status).toBe(200);
    expect(served.headers['content-type']).toBe('image/png');
  });

  it('publishes a thread of two to Bluesky (a post and its reply) and to a webhook (one delivery with both parts)', async () => {
    const author = await pds.createAccount('twoparts');
    const accountId = await connect(author);
    const blog = await createWebhookAccount(t, key, receiver.urlFor('/two'));
    const createsBefore = proxy.calls(CREATE_RECORD);
    const post = await createPost(t, key, {
      text: 'Herald 1.4 is out 🎉',
      thread: [{ text: 'What changed: threads of two, like this one.', link: page.url }],
      targets: [{ accountId }, { accountId: blog.id }],
    });
    const jobOf = (id: string) => (post.jobs as { id: string; accountId: string }[]).find((j) => j.accountId === id)!.id;

    const job = await waitForJob<Job>(t, key, jobOf(accountId), dead);
    expect(job).toMatchObject({ status: 'succeeded', attemptCount: 1 });
    expect(job.parts?.map((p) => [p.part, p.text, p.published])).toEqual([
      [1, 'Herald 1.4 is out 🎉', true],
      [2, 'What changed: threads of two, like this one.', true],
    ]);
    const found = await records(author);
    expect(found.map((r) => r.value.text)).toEqual(['Herald 1.4 is out 🎉', 'What changed: threads of two, like this one.']);
    expect(proxy.calls(CREATE_RECORD) - createsBefore).toBe(2);
    // The reply's root and parent are both the first post.
    expectThread(found, job);
    expect(found[1].value.reply?.root.uri).toBe(found[0].uri);
    expect(found[1].value.reply?.parent.uri).toBe(found[0].uri);
    expect((found[1].value.embed as AppBskyEmbedExternal.Main).external).toMatchObject({ uri: page.url, title: 'The engine room' });

    const hooked = await waitForJob<Job>(t, key, jobOf(blog.id), dead);
    expect(hooked.status).toBe('succeeded');
    expect(hooked.parts?.map((p) => [p.part, p.published])).toEqual([
      [1, true],
      [2, true],
    ]);
    const deliveries = receiver.requests.filter((r) => r.path === '/two');
    expect(deliveries).toHaveLength(1);
    const event = verifySignature(blog.secret, deliveries[0]) as {
      data: { text: string; thread: { text: string; link: string | null }[] };
    };
    expect(event.data.text).toBe('Herald 1.4 is out 🎉');
    expect(event.data.thread).toEqual([{ text: 'What changed: threads of two, like this one.', link: page.url, media: [] }]);
  });

  it('a thread of two whose reply the PDS refuses: the reply is fixed in the dead-letter queue (index 0) and the requeue publishes only it', async () => {
    const author = await pds.createAccount('tworefused');
    const accountId = await connect(author);
    // As in the longer case below: 290 graphemes and a link whose page cannot be read go over 300.
    const long = `${'Reply '.repeat(48)}ab`;
    const createsBefore = proxy.calls(CREATE_RECORD);
    const post = await createPost(t, key, {
      text: 'Two parts, one refused',
      thread: [{ text: long, link: 'http://127.0.0.1:9/gone' }],
      targets: [{ accountId }],
    });
    const jobId = post.jobs[0].id;
    const died = await waitForJob<Job>(t, key, jobId, dead);
    expect(died).toMatchObject({ status: 'dead', errorClass: 'permanent' });
    expect(died.lastError).toMatch(/while creating part 2 of 2/);
    expect(died.lastError).toMatch(/; part 1 of 2 published \(a retry or requeue continues with part 2\)/);

    const other = await t
      .http()
      .patch(`/v1/dlq/${jobId}`)
      .set(bearer(key))
      .send({ thread: [{ index: 1, text: 'no such part' }] });
    expect(other.status).toBe(400);
    expect(other.body.message).toBe('thread.0.index: there is no part 1 (the thread has one further part, 0)');
    const fixed = await t
      .http()
      .patch(`/v1/dlq/${jobId}`)
      .set(bearer(key))
      .send({ thread: [{ index: 0, text: 'The reply, shorter', link: null }] });
    expect(fixed.status).toBe(200);
    expect(fixed.body.payload.thread).toEqual([{ text: 'The reply, shorter', link: null, media: [] }]);
    await t.http().post(`/v1/dlq/${jobId}/requeue`).set(bearer(key)).send({}).expect(200);

    const done = await waitForJob<Job>(t, key, jobId, (j) => j.status === 'succeeded' || (j.status === 'dead' && j.attemptCount > 1));
    expect(done).toMatchObject({ status: 'succeeded', attemptCount: 2 });
    const found = await records(author);
    expect(found.map((r) => r.value.text)).toEqual(['Two parts, one refused', 'The reply, shorter']);
    expectThread(found, done);
    // Part 1, the refused reply, then the fixed reply: part 1 was not created again.
    expect(proxy.calls(CREATE_RECORD) - createsBefore).toBe(3);
  });

  it('a part the PDS refuses kills the thread with the published parts listed; fixed part by part and requeued, it continues from that part', async () => {
    const author = await pds.createAccount('refused');
    const accountId = await connect(author);
    // Part 3 is 290 graphemes with a link whose page cannot be read: the link goes into the text
    // (no card), and the PDS refuses a text of more than 300 graphemes. Intake cannot know the
    // page will be unreachable, so it takes the part.
    const gone = 'http://127.0.0.1:9/gone';
    const long = `${'Three '.repeat(48)}ab`;
    expect([...long].length).toBe(290);
    const createsBefore = proxy.calls(CREATE_RECORD);
    const post = await createPost(t, key, {
      text: 'One',
      thread: [{ text: 'Two' }, { text: long, link: gone }, { text: 'Four' }, { text: 'Five' }],
      targets: [{ accountId }],
    });
    const jobId = post.jobs[0].id;
    const died = await waitForJob<Job>(t, key, jobId, dead);
    expect(died).toMatchObject({ status: 'dead', errorClass: 'permanent', attemptCount: 1 });
    expect(died.lastError).toMatch(/refused the request while creating part 3 of 5 \(HTTP 400 InvalidRequest/);
    expect(died.lastError).toMatch(/parts 1–2 of 5 published \(a retry or requeue continues with part 3\)/);

    // The dead-letter queue lists the published parts with their URIs.
    const dlq = await t.http().get(`/v1/dlq/${jobId}`).set(bearer(key)).expect(200);
    const listed = dlq.body.parts as Part[];
    expect(listed.map((p) => [p.part, p.published])).toEqual([
      [1, true],
      [2, true],
      [3, false],
      [4, false],
      [5, false],
    ]);
    const firstTwo = await records(author);
    expect(firstTwo.map((r) => r.value.text)).toEqual(['One', 'Two']);
    expect(listed.slice(0, 2).map((p) => p.remoteId)).toEqual(firstTwo.map((r) => r.uri));
    expect(listed.slice(2).map((p) => p.remoteId)).toEqual([null, null, null]);

    // A published part cannot change: the first part, or a further one.
    const first = await t.http().patch(`/v1/dlq/${jobId}`).set(bearer(key)).send({ text: 'One, again' });
    expect(first.status).toBe(409);
    expect(first.body.message).toMatch(/^part 1 \(text, title, link, media\) is already published \(at:\/\//);
    const second = await t
      .http()
      .patch(`/v1/dlq/${jobId}`)
      .set(bearer(key))
      .send({ thread: [{ index: 0, text: 'Two, again' }] });
    expect(second.status).toBe(409);
    expect(second.body.message).toMatch(/^part 2 \(thread\.0\) is already published/);
    // The platform's limit applies to the edited part as at intake.
    const tooLong = await t
      .http()
      .patch(`/v1/dlq/${jobId}`)
      .set(bearer(key))
      .send({ thread: [{ index: 1, text: 'x'.repeat(301) }] });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.message).toBe('bluesky: thread.1: text is 301 graphemes, the limit is 300');
    const unchanged = await t.http().get(`/v1/dlq/${jobId}`).set(bearer(key)).expect(200);
    expect(unchanged.body.payload.thread[1].text).toBe(long);

    const fixed = await t
      .http()
      .patch(`/v1/dlq/${jobId}`)
      .set(bearer(key))
      .send({ thread: [{ index: 1, text: 'Three, shorter', link: null }] });
    expect(fixed.status).toBe(200);
    expect(fixed.body.payload.thread.map((p: { text: string }) => p.text)).toEqual(['Two', 'Three, shorter', 'Four', 'Five']);
    await t.http().post(`/v1/dlq/${jobId}/requeue`).set(bearer(key)).send({}).expect(200);

    const done = await waitForJob<Job>(t, key, jobId, (j) => j.status === 'succeeded' || (j.status === 'dead' && j.attemptCount > 1));
    expect(done).toMatchObject({ status: 'succeeded', attemptCount: 2 });
    const found = await records(author);
    expect(found.map((r) => r.value.text)).toEqual(['One', 'Two', 'Three, shorter', 'Four', 'Five']);
    expectThread(found, done);
    // The first two parts kept their records: the requeue started at part 3.
    expect(done.parts?.slice(0, 2).map((p) => p.remoteId)).toEqual(firstTwo.map((r) => r.uri));
    // 2 parts, the refused third, then parts 3 to 5: no part was created twice.
    expect(proxy.calls(CREATE_RECORD) - createsBefore).toBe(6);
  });

  it('the answer of part 3 is lost after the PDS wrote it: the retry finds it at its record key and publishes no duplicate', async () => {
    const author = await pds.createAccount('lossythread');
    const accountId = await connect(author);
    const createsBefore = proxy.calls(CREATE_RECORD);
    const dropsBefore = proxy.dropped(CREATE_RECORD);
    // Parts 1 and 2 are answered; part 3 is written by the PDS and its answer cut off.
    proxy.dropResponses(CREATE_RECORD, 1, 2);
    const post = await createPost(t, key, {
      text: 'Exactly once: one',
      thread: [
        { text: 'Exactly once: two' },
        { text: 'Exactly once: three' },
        { text: 'Exactly once: four' },
        { text: 'Exactly once: five' },
      ],
      targets: [{ accountId }],
    });
    const job = await waitForJob<Job>(t, key, post.jobs[0].id, dead);
    expect(proxy.dropped(CREATE_RECORD) - dropsBefore).toBe(1);
    expect(job).toMatchObject({ status: 'succeeded', attemptCount: 2 });
    expect(job.attempts[0]).toMatchObject({ errorClass: 'transient', httpStatus: null });
    expect(job.attempts[0].message).toMatch(/creating part 3 of 5/);
    expect(job.attempts[0].message).toMatch(/parts 1–2 of 5 published/);
    expect(job.attempts[1].warnings).toContain('part 3 of 5 was already published by an earlier attempt whose answer was lost');

    const found = await records(author);
    expect(found.map((r) => r.value.text)).toEqual([
      'Exactly once: one',
      'Exactly once: two',
      'Exactly once: three',
      'Exactly once: four',
      'Exactly once: five',
    ]);
    expectThread(found, job);
    // Attempt 1 created parts 1–3 (the third's answer lost); attempt 2 only parts 4 and 5.
    expect(proxy.calls(CREATE_RECORD) - createsBefore).toBe(5);
  });

  /** The account as the worker hands it to the connector: config and decrypted credentials. */
  async function storedAccount(accountId: string): Promise<DeliveryAccount> {
    const row = await withClient(
      t.databaseUrl,
      async (db) =>
        (await db.query('SELECT workspace_id, name, config, credentials FROM accounts WHERE id = $1', [accountId])).rows[0] as {
          workspace_id: string;
          name: string;
          config: Record<string, unknown>;
          credentials: string;
        },
    );
    const box = new SecretBox(t.config.secretKey);
    return {
      id: accountId,
      workspaceId: row.workspace_id,
      name: row.name,
      config: row.config,
      credentials: openCredentials(box, accountId, row.credentials),
    };
  }

  it('a retry that knows nothing of an earlier attempt (its worker died before recording it) finds every part at its key and creates none', async () => {
    const author = await pds.createAccount('crashed');
    const account = await storedAccount(await connect(author));
    // The connector driven as a worker drives it: no post of the API is involved, so no worker of the app takes part.
    const connector = new BlueskyConnector(t.config);
    const part = (text: string) => ({ text, link: null, media: [] });
    const job: DeliveryJob = {
      id: randomUUID(),
      postId: randomUUID(),
      accountId: account.id,
      workspaceId: account.workspaceId,
      idempotencyKey: randomUUID(),
      attemptNumber: 1,
      payload: {
        text: 'Crash one',
        title: null,
        link: null,
        media: [],
        metadata: null,
        scheduledAt: new Date().toISOString(),
        thread: [part('Crash two'), part('Crash three')],
      },
      media: [],
      published: [],
      previousAttempt: null,
    };
    const first = await connector.deliver(job, account, new AbortController().signal);
    expect(first.errorClass).toBe('success');
    expect(first.parts?.map((p) => p.index)).toEqual([0, 1, 2]);
    const creates = proxy.calls(CREATE_RECORD);

    const again = await connector.deliver({ ...job, attemptNumber: 2, published: [] }, account, new AbortController().signal);
    expect(again.errorClass).toBe('success');
    expect(again.parts).toEqual(first.parts);
    expect(again.remoteId).toBe(first.remoteId);
    expect(again.warnings).toEqual(
      [1, 2, 3].map((n) => `part ${n} of 3 was already published by an earlier attempt whose answer was lost`),
    );
    expect(proxy.calls(CREATE_RECORD)).toBe(creates);
    expect((await records(author)).map((r) => r.value.text)).toEqual(['Crash one', 'Crash two', 'Crash three']);
  });
});
