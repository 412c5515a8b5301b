import { bootTestApp, TestApp } from './support/app';
import { withClient } from './support/database';
import { createWebhookAccount } from './support/engine';
import { makeImage, postMedia, uploadImage } from './support/media';
import { bearer } from './support/config';

/**
 * POST /v1/media, GET/PATCH /v1/media/:id and the signed links GET /media/:id, against the real
 * app and database: types sniffed from the bytes, the 5 MB limit, workspace isolation (also at
 * post intake), and links that stop working when tampered with or expired.
 */
describe('media API', () => {
  let t: TestApp;
  let otherKey: string;

  beforeAll(async () => {
    t = await bootTestApp({ config: { allowPrivateUrls: true } });
    const res = await t.http().post('/v1/workspaces').set(bearer(t.adminKey)).send({ name: 'Other' }).expect(201);
    otherKey = res.body.apiKey.key;
  });
  afterAll(() => t.close());

  it.each(['png', 'jpeg', 'webp', 'gif'] as const)(
    'accepts a %s image, typed from its bytes and measured from its header',
    async (format) => {
      const bytes = await makeImage(format, 40, 30);
      // The client claims a different type and name: neither is trusted.
      const res = await postMedia(t, t.adminKey, bytes, { alt: 'a red square', filename: 'photo.txt', contentType: 'text/plain' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ mimeType: `image/${format}`, width: 40, height: 30, byteSize: bytes.length, alt: 'a red square' });
      expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
    },
  );

  it('refuses content that is not an image with 415, whatever its Content-Type says', async () => {
    const res = await postMedia(t, t.adminKey, Buffer.from('<html><script>alert(1)</script></html>'), {
      contentType: 'image/png',
      filename: 'x.png',
    });
    expect(res.status).toBe(415);
    expect(res.body.message).toMatch(/not a PNG, JPEG, WebP or GIF image \(checked from its content/);
  });

  it('refuses a truncated image with 400 naming the problem', async () => {
    const png = await makeImage('png');
    const res = await postMedia(t, t.adminKey, png.subarray(0, 12));
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/starts like image\/png but its header is damaged or truncated/);
  });

  it('accepts exactly 5 MB and refuses one byte more with 413', async () => {
    const png = await makeImage('png');
    const limit = 5 * 1024 * 1024;
    // Trailing bytes after IEND: still a PNG by its header, and exactly at the limit.
    const atLimit = Buffer.concat([png, Buffer.alloc(limit - png.length)]);
    expect((await postMedia(t, t.adminKey, atLimit, { alt: 'big' })).status).toBe(201);
    const over = await postMedia(t, t.adminKey, Buffer.concat([atLimit, Buffer.alloc(1)]));
    expect(over.status).toBe(413);
    expect(over.body).toEqual({ statusCode: 413, error: 'Payload Too Large', message: 'the image is larger than the 5 MB limit' });
  });

  it('answers 400 without a file, and for unknown fields', async () => {
    const none = await t.http().post('/v1/media').set(bearer(t.adminKey)).field('alt', 'x');
    expect(none.status).toBe(400);
    expect(none.body.message).toMatch(/field named "file"/);
    const extra = await t
      .http()
      .post('/v1/media')
      .set(bearer(t.adminKey))
      .field('colour', 'red')
      .attach('file', await makeImage('png'), 'a.png');
    expect(extra.status).toBe(400);
    expect(extra.body.message).toMatch(/colour is not allowed/);
    const twoFiles = await t
      .http()
      .post('/v1/media')
      .set(bearer(t.adminKey))
      .attach('file', await makeImage('png'), 'a.png')
      .attach('other', await makeImage('png'), 'b.png');
    expect(twoFiles.status).toBe(400);
  });

  it('needs an API key', async () => {
    const res = await t
      .http()
      .post('/v1/media')
      .attach('file', await makeImage('png'), 'a.png');
    expect(res.status).toBe(401);
  });

  it('updates the alt text, and hides media from other workspaces (404)', async () => {
    const id = await uploadImage(t, t.adminKey, await makeImage('png'), '');
    const patched = await t.http().patch(`/v1/media/${id}`).set(bearer(t.adminKey)).send({ alt: 'now described' });
    expect(patched.status).toBe(200);
    expect(patched.body.alt).toBe('now described');
    expect((await t.http().get(`/v1/media/${id}`).set(bearer(otherKey))).status).toBe(404);
    expect((await t.http().patch(`/v1/media/${id}`).set(bearer(otherKey)).send({ alt: 'x' })).status).toBe(404);
  });

  it("refuses another workspace's media id at post intake with 400, like an unknown id", async () => {
    const theirs = await uploadImage(t, otherKey, await makeImage('png'));
    const account = await createWebhookAccount(t, t.adminKey, 'http://127.0.0.1:9/hook');
    const res = await t
      .http()
      .post('/v1/posts')
      .set(bearer(t.adminKey))
      .send({ text: 'hi', media: [theirs], targets: [{ accountId: account.id }] });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(`media: unknown media id ${theirs}`);
    const mine = await uploadImage(t, t.adminKey, await makeImage('png'));
    const ok = await t
      .http()
      .post('/v1/posts')
      .set(bearer(t.adminKey))
      .send({ text: 'hi', media: [mine], targets: [{ accountId: account.id }] });
    expect(ok.status).toBe(201);
    expect(ok.body.media).toEqual([mine]);
  });

  describe('signed links', () => {
    let id: string;
    let bytes: Buffer;
    let url: URL;

    beforeAll(async () => {
      bytes = await makeImage('jpeg');
      id = await uploadImage(t, t.adminKey, bytes);
      const res = await t.http().get(`/v1/media/${id}`).set(bearer(t.adminKey)).expect(200);
      url = new URL(res.body.url);
      expect(url.origin).toBe(t.config.publicUrl);
    });

    it('serve the bytes without an API key, typed as sniffed', async () => {
      const res = await t
        .http()
        .get(url.pathname + url.search)
        .buffer(true);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('image/jpeg');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(Buffer.compare(res.body as Buffer, bytes)).toBe(0);
    });

    it('refuse a tampered signature, expiry or id with 403', async () => {
      const sig = url.searchParams.get('sig')!;
      const exp = Number(url.searchParams.get('exp'));
      const flipped = sig.slice(0, -1) + (sig.endsWith('A') ? 'B' : 'A');
      expect((await t.http().get(`/media/${id}?exp=${exp}&sig=${flipped}`)).status).toBe(403);
      expect((await t.http().get(`/media/${id}?exp=${exp + 3600}&sig=${sig}`)).status).toBe(403);
      expect((await t.http().get(`/media/${id}`)).status).toBe(403);
      const other = await uploadImage(t, t.adminKey, await makeImage('png'));
      expect((await t.http().get(`/media/${other}?exp=${exp}&sig=${sig}`)).status).toBe(403);
    });

    it('refuse an expired link with 403 (signed correctly, but in the past)', async () => {
      const { MediaUrlSigner } = await import('../src/media/media-url');
      const signer = new MediaUrlSigner(t.config.secretKey, t.config.publicUrl, 60);
      const old = new URL(signer.url(id, new Date(Date.now() - 3_600_000)));
      const res = await t.http().get(old.pathname + old.search);
      expect(res.status).toBe(403);
      expect(res.body.message).toMatch(/expired/);
      const fresh = new URL(signer.url(id, new Date()));
      expect((await t.http().get(fresh.pathname + fresh.search)).status).toBe(200);
    });

    it('answer 404 once the media is gone with its workspace', async () => {
      const ws = await t.http().post('/v1/workspaces').set(bearer(t.adminKey)).send({ name: 'Doomed' }).expect(201);
      const doomed = await uploadImage(t, ws.body.apiKey.key, await makeImage('png'));
      const link = new URL((await t.http().get(`/v1/media/${doomed}`).set(bearer(ws.body.apiKey.key))).body.url);
      await withClient(t.databaseUrl, (db) => db.query('DELETE FROM workspaces WHERE id = $1', [ws.body.workspace.id]));
      const left = await withClient(t.databaseUrl, (db) => db.query('SELECT count(*)::int AS n FROM media WHERE id = $1', [doomed]));
      expect(left.rows[0].n).toBe(0);
      expect((await t.http().get(link.pathname + link.search)).status).toBe(404);
    });
  });
});
