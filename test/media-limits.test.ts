import sharp from 'sharp';
import { bootTestApp, TestApp } from './support/app';
import { withClient } from './support/database';
import { killJobs } from './support/dlq';
import { createPost, createWebhookAccount } from './support/engine';
import { makeImage, postMedia, uploadImage } from './support/media';
import { pngBomb } from './support/png-bomb';
import { bearer } from './support/config';

/**
 * What an upload may cost and how media leave: decompression bombs and oversized pixel counts
 * refused at upload (from the header, before any decode), the per-workspace quota, and
 * DELETE /v1/media/:id, which never silently breaks a post that still needs the image.
 */

async function newWorkspace(t: TestApp, name: string): Promise<{ id: string; key: string }> {
  const res = await t.http().post('/v1/workspaces').set(bearer(t.adminKey)).send({ name }).expect(201);
  return { id: res.body.workspace.id, key: res.body.apiKey.key };
}

async function mediaRows(
  t: TestApp,
  workspaceId: string,
): Promise<{ n: number; bytes: number; usage: { bytes: string; items: number } | null }> {
  return withClient(t.databaseUrl, async (db) => {
    const m = await db.query('SELECT count(*)::int AS n, coalesce(sum(byte_size), 0)::int AS bytes FROM media WHERE workspace_id = $1', [
      workspaceId,
    ]);
    const u = await db.query('SELECT bytes::text AS bytes, items FROM media_usage WHERE workspace_id = $1', [workspaceId]);
    return { n: m.rows[0].n, bytes: m.rows[0].bytes, usage: u.rows[0] ?? null };
  });
}

/** A GIF of `frames` 4 × 4 frames, black and white in turn (the encoder merges frames that look alike). */
async function animatedGif(frames: number): Promise<Buffer> {
  const raw = Buffer.alloc(4 * 4 * frames * 3);
  for (let i = 0; i < frames; i++) raw.fill(i % 2 ? 255 : 0, i * 48, i * 48 + 48);
  return sharp(raw, { raw: { width: 4, height: 4 * frames, channels: 3, pageHeight: 4 } })
    .gif()
    .toBuffer();
}

/** A PNG padded with trailing bytes to `size` (still a PNG by its header). */
async function pngOfSize(size: number): Promise<Buffer> {
  const png = await makeImage('png');
  return Buffer.concat([png, Buffer.alloc(size - png.length)]);
}

describe('pixel and frame limits at upload', () => {
  let t: TestApp;
  let ws: { id: string; key: string };
  beforeAll(async () => {
    t = await bootTestApp();
    ws = await newWorkspace(t, 'Pixels');
  });
  afterAll(() => t.close());

  it('refuses a decompression bomb with 413 naming the pixel limit, storing nothing', async () => {
    const bomb = pngBomb(8000, 8000); // 64 M pixels (192 MB decoded) in about 8 KB
    expect(bomb.length).toBeLessThan(20_000);
    const res = await postMedia(t, ws.key, bomb, { alt: 'bomb' });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({
      statusCode: 413,
      error: 'Payload Too Large',
      message:
        "the image is 8000 × 8000 pixels (64,000,000); the limit is 36,152,319 pixels, the most that every platform takes (LinkedIn's limit)",
    });
    expect(await mediaRows(t, ws.id)).toEqual({ n: 0, bytes: 0, usage: null });
  });

  it("takes an image just under LinkedIn's 36,152,320 pixels and refuses one just over", async () => {
    const under = await postMedia(t, ws.key, pngBomb(6013, 6012), { alt: 'under' }); // 36,150,156
    expect(under.status).toBe(201);
    expect(under.body).toMatchObject({ width: 6013, height: 6012 });
    const over = await postMedia(t, ws.key, pngBomb(6013, 6013), { alt: 'over' }); // 36,156,169
    expect(over.status).toBe(413);
    expect(over.body.message).toMatch(/^the image is 6013 × 6013 pixels \(36,156,169\)/);
  });

  it('refuses an animation over 250 frames with 413, and takes one of 250', async () => {
    const ok = await postMedia(t, ws.key, await animatedGif(250), { alt: '250 frames' });
    expect(ok.status).toBe(201);
    const tooMany = await postMedia(t, ws.key, await animatedGif(251), { alt: '251 frames' });
    expect(tooMany.status).toBe(413);
    expect(tooMany.body.message).toBe("the animation has 251 frames; the limit is 250 (LinkedIn's limit for GIFs)");
  });
});

describe('media quota', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await bootTestApp({ config: { media: { urlTtlSeconds: 3600, quotaBytes: 5 * 1024 * 1024, quotaCount: 3 } } });
  });
  afterAll(() => t.close());

  it('refuses the image past the count quota with 409 saying what is used and how to make room', async () => {
    const ws = await newWorkspace(t, 'Count');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await uploadImage(t, ws.key, await makeImage('png')));
    const res = await postMedia(t, ws.key, await makeImage('png'), { alt: 'fourth' });
    expect(res.status).toBe(409);
    expect(res.body.message).toBe(
      "the workspace's media quota is full: 3 of 3 images stored; delete media the workspace no longer needs (GET /v1/media, DELETE /v1/media/:id) or ask the operator to raise MEDIA_QUOTA_COUNT",
    );
    expect((await mediaRows(t, ws.id)).n).toBe(3);
    // Deleting one makes room at once.
    await t.http().delete(`/v1/media/${ids[0]}`).set(bearer(ws.key)).expect(204);
    expect((await postMedia(t, ws.key, await makeImage('png'), { alt: 'fits again' })).status).toBe(201);
  });

  it('refuses the image past the byte quota with 409, and other workspaces keep their own quota', async () => {
    const ws = await newWorkspace(t, 'Bytes');
    const other = await newWorkspace(t, 'Neighbour');
    const three = 3 * 1024 * 1024;
    await uploadImage(t, ws.key, await pngOfSize(three));
    const res = await postMedia(t, ws.key, await pngOfSize(three), { alt: 'too much' });
    expect(res.status).toBe(409);
    expect(res.body.message).toMatch(
      /^the workspace's media quota is full: 3\.0 MiB of 5\.0 MiB used, this image needs 3\.0 MiB more; .* MEDIA_QUOTA_BYTES$/,
    );
    expect(await mediaRows(t, ws.id)).toEqual({ n: 1, bytes: three, usage: { bytes: String(three), items: 1 } });
    expect((await postMedia(t, other.key, await pngOfSize(three), { alt: 'theirs' })).status).toBe(201);
  });

  it('lets concurrent uploads fill the quota exactly, never past it', async () => {
    const ws = await newWorkspace(t, 'Race');
    const image = await makeImage('png');
    const answers = await Promise.all(Array.from({ length: 10 }, () => postMedia(t, ws.key, image, { alt: 'racing' })));
    expect(answers.filter((r) => r.status === 201)).toHaveLength(3);
    expect(answers.filter((r) => r.status === 409)).toHaveLength(7);
    expect(await mediaRows(t, ws.id)).toEqual({ n: 3, bytes: 3 * image.length, usage: { bytes: String(3 * image.length), items: 3 } });
  });

  it('shows the usage and the quota, and lists the images newest first', async () => {
    const ws = await newWorkspace(t, 'Usage');
    const a = await uploadImage(t, ws.key, await makeImage('png'));
    const b = await uploadImage(t, ws.key, await makeImage('jpeg'));
    const usage = await t.http().get('/v1/media/usage').set(bearer(ws.key)).expect(200);
    const rows = await mediaRows(t, ws.id);
    expect(usage.body).toEqual({ bytes: rows.bytes, count: 2, quotaBytes: 5 * 1024 * 1024, quotaCount: 3 });
    const first = await t.http().get('/v1/media?limit=1').set(bearer(ws.key)).expect(200);
    expect(first.body.data.map((m: { id: string }) => m.id)).toEqual([b]);
    const second = await t.http().get(`/v1/media?limit=1&cursor=${first.body.nextCursor}`).set(bearer(ws.key)).expect(200);
    expect(second.body).toEqual({ data: [expect.objectContaining({ id: a, alt: 'a test image' })], nextCursor: null });
    expect(JSON.stringify(first.body)).not.toMatch(/"bytes"|"url"/);
  });
});

describe('DELETE /v1/media/:id', () => {
  let t: TestApp;
  let ws: { id: string; key: string };
  let account: string;
  beforeAll(async () => {
    t = await bootTestApp({ config: { allowPrivateUrls: true } });
    ws = await newWorkspace(t, 'Deleting');
    account = (await createWebhookAccount(t, ws.key, 'http://127.0.0.1:9/hook')).id;
  });
  afterAll(() => t.close());

  it('deletes the bytes, the details and the signed links, and frees the quota', async () => {
    const id = await uploadImage(t, ws.key, await makeImage('png'));
    const link = new URL((await t.http().get(`/v1/media/${id}`).set(bearer(ws.key)).expect(200)).body.url);
    expect((await t.http().get(link.pathname + link.search)).status).toBe(200);
    const before = await mediaRows(t, ws.id);
    await t.http().delete(`/v1/media/${id}`).set(bearer(ws.key)).expect(204);
    expect((await t.http().get(`/v1/media/${id}`).set(bearer(ws.key))).status).toBe(404);
    expect((await t.http().get(link.pathname + link.search)).status).toBe(404);
    const after = await mediaRows(t, ws.id);
    expect(after.n).toBe(before.n - 1);
    expect(after.usage).toEqual({ bytes: String(after.bytes), items: after.n });
    const again = await t.http().delete(`/v1/media/${id}`).set(bearer(ws.key)).expect(404);
    expect(again.body.message).toBe(`media "${id}" was not found`);
  });

  it("answers 404 for another workspace's image and leaves it alone", async () => {
    const other = await newWorkspace(t, 'Owner');
    const theirs = await uploadImage(t, other.key, await makeImage('png'));
    await t.http().delete(`/v1/media/${theirs}`).set(bearer(ws.key)).expect(404);
    await t.http().get(`/v1/media/${theirs}`).set(bearer(other.key)).expect(200);
  });

  it('refuses with 409 naming the scheduled post that needs it; after the post is cancelled it deletes', async () => {
    const id = await uploadImage(t, ws.key, await makeImage('png'));
    const later = new Date(Date.now() + 86_400_000).toISOString();
    const post = await createPost(t, ws.key, { text: 'with an image', media: [id], scheduledAt: later, targets: [{ accountId: account }] });
    const refused = await t.http().delete(`/v1/media/${id}`).set(bearer(ws.key)).expect(409);
    expect(refused.body.message).toContain(
      `media ${id} is still needed by posts not yet published or waiting in the dead-letter queue: ${post.id}.`,
    );
    await t.http().get(`/v1/media/${id}`).set(bearer(ws.key)).expect(200);
    await t.http().delete(`/v1/posts/${post.id}`).set(bearer(ws.key)).expect(200);
    await t.http().delete(`/v1/media/${id}`).set(bearer(ws.key)).expect(204);
  });

  it("refuses while a draft (no jobs yet) holds it, in its own images or a thread part's; once the draft no longer does, it deletes", async () => {
    const own = await uploadImage(t, ws.key, await makeImage('png'));
    const inPart = await uploadImage(t, ws.key, await makeImage('png'));
    const draft = (
      await t
        .http()
        .post('/v1/posts')
        .set(bearer(ws.key))
        .send({
          text: 'a draft with images',
          media: [own],
          thread: [{ text: 'two', media: [inPart] }, { text: 'three' }],
          status: 'draft',
          targets: [{ accountId: account }],
        })
        .expect(201)
    ).body as { id: string; jobs: unknown[] };
    expect(draft.jobs).toEqual([]);
    for (const id of [own, inPart]) {
      const refused = await t.http().delete(`/v1/media/${id}`).set(bearer(ws.key)).expect(409);
      expect(refused.body.message).toContain(`still needed by posts not yet published or waiting in the dead-letter queue: ${draft.id}.`);
      await t.http().get(`/v1/media/${id}`).set(bearer(ws.key)).expect(200);
    }
    await t.http().patch(`/v1/posts/${draft.id}`).set(bearer(ws.key)).send({ media: [], thread: null }).expect(200);
    await t.http().delete(`/v1/media/${own}`).set(bearer(ws.key)).expect(204);
    await t.http().delete(`/v1/media/${inPart}`).set(bearer(ws.key)).expect(204);
  });

  it('refuses while a dead job could be requeued with it; after the discard it deletes', async () => {
    const id = await uploadImage(t, ws.key, await makeImage('png'));
    const post = await createPost(t, ws.key, { text: 'failed with an image', media: [id], targets: [{ accountId: account }] });
    await killJobs(t.databaseUrl, [post.jobs[0].id]);
    const refused = await t.http().delete(`/v1/media/${id}`).set(bearer(ws.key)).expect(409);
    expect(refused.body.message).toContain(post.id);
    await t.http().delete(`/v1/dlq/${post.jobs[0].id}`).set(bearer(ws.key)).expect(200);
    await t.http().delete(`/v1/media/${id}`).set(bearer(ws.key)).expect(204);
  });

  it("follows a dead job's edited media, not only its post's", async () => {
    const original = await uploadImage(t, ws.key, await makeImage('png'));
    const replacement = await uploadImage(t, ws.key, await makeImage('jpeg'));
    const post = await createPost(t, ws.key, { text: 'edited later', media: [original], targets: [{ accountId: account }] });
    const job = post.jobs[0].id;
    await killJobs(t.databaseUrl, [job]);
    await t
      .http()
      .patch(`/v1/dlq/${job}`)
      .set(bearer(ws.key))
      .send({ media: [replacement] })
      .expect(200);
    // The post still lists the original, but no job will send it any more.
    await t.http().delete(`/v1/media/${original}`).set(bearer(ws.key)).expect(204);
    const refused = await t.http().delete(`/v1/media/${replacement}`).set(bearer(ws.key)).expect(409);
    expect(refused.body.message).toContain(post.id);
  });

  it('names ten posts and says there are more', async () => {
    const id = await uploadImage(t, ws.key, await makeImage('png'));
    const later = new Date(Date.now() + 86_400_000).toISOString();
    const posts = [];
    for (let i = 0; i < 11; i++)
      posts.push(await createPost(t, ws.key, { text: `post ${i}`, media: [id], scheduledAt: later, targets: [{ accountId: account }] }));
    const refused = await t.http().delete(`/v1/media/${id}`).set(bearer(ws.key)).expect(409);
    const named = posts.filter((p) => refused.body.message.includes(p.id));
    expect(named).toHaveLength(10);
    expect(refused.body.message).toContain(' and more.');
  });
});
