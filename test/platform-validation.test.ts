import { bootTestApp, TestApp } from './support/app';
import { withClient } from './support/database';
import { createWebhookAccount } from './support/engine';
import { makeImage, uploadImage } from './support/media';
import { bearer } from './support/config';

/**
 * Platform limits at intake (docs/api.md "Limits"): POST /v1/posts (and PATCH) check each target with its own
 * platform and effective text; the 400 names the target, its platform and the limit, and
 * nothing is written. Bluesky accounts are inserted by SQL so this file does not depend on the
 * Bluesky connector; LinkedIn accounts go through the API.
 */
describe('platform validation at intake', () => {
  let t: TestApp;
  let webhook: string;
  let linkedin: string;
  let bluesky: string;

  const FAMILY = '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}\u200D\u{1F466}';
  const FLAG = '\u{1F1EB}\u{1F1F7}';
  const post = (body: Record<string, unknown>) => t.http().post('/v1/posts').set(bearer(t.adminKey)).send(body);
  const postCount = async () =>
    withClient(t.databaseUrl, async (db) => (await db.query('SELECT count(*)::int AS n FROM posts')).rows[0].n as number);

  beforeAll(async () => {
    t = await bootTestApp({ config: { allowPrivateUrls: true } });
    webhook = (await createWebhookAccount(t, t.adminKey, 'http://127.0.0.1:9/hook')).id;
    const li = await t
      .http()
      .post('/v1/accounts')
      .set(bearer(t.adminKey))
      .send({ provider: 'linkedin', name: 'LI', config: { accessToken: 'AQVtoken', authorUrn: 'urn:li:person:abc' } });
    expect(li.status).toBe(201);
    linkedin = li.body.id;
    const ws = await withClient(
      t.databaseUrl,
      async (db) => (await db.query('SELECT workspace_id FROM accounts WHERE id = $1', [webhook])).rows[0].workspace_id as string,
    );
    bluesky = await withClient(
      t.databaseUrl,
      async (db) =>
        (
          await db.query(
            `INSERT INTO accounts (workspace_id, provider, name, credentials) VALUES ($1, 'bluesky', 'BS', 'x') RETURNING id`,
            [ws],
          )
        ).rows[0].id as string,
    );
  });
  afterAll(() => t.close());

  it('accepts 300 Bluesky graphemes made of emoji sequences and flags', async () => {
    const text = FAMILY.repeat(50) + FLAG.repeat(50) + 'é'.normalize('NFD').repeat(200); // 300 graphemes, 1,100 UTF-16 units
    const res = await post({ text, targets: [{ accountId: bluesky }, { accountId: webhook }] });
    expect(res.status).toBe(201);
  });

  it('refuses 301 Bluesky graphemes with a 400 naming the target, platform and limit, writing nothing', async () => {
    const before = await postCount();
    const res = await post({ text: 'x'.repeat(301), targets: [{ accountId: webhook }, { accountId: bluesky }] });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('targets.1 (bluesky): text is 301 graphemes, the limit is 300');
    expect(await postCount()).toBe(before);
  });

  it("checks a per-target text override against that target's platform only", async () => {
    const long = 'y'.repeat(1000);
    const ok = await post({ text: long, targets: [{ accountId: linkedin }, { accountId: bluesky, text: 'short for Bluesky' }] });
    expect(ok.status).toBe(201);
    const bad = await post({ text: 'fine', targets: [{ accountId: linkedin, text: 'z'.repeat(3001) }, { accountId: bluesky }] });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('targets.0 (linkedin): text is 3001 characters, the limit is 3000');
  });

  it('requires alt text on every image, for every platform', async () => {
    const media = await uploadImage(t, t.adminKey, await makeImage('png'), '');
    const res = await post({ text: 'pic', media: [media], targets: [{ accountId: webhook }, { accountId: linkedin }] });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain(`targets.0 (webhook): media.0 (${media}) has no alt text`);
    expect(res.body.message).toContain(`targets.1 (linkedin): media.0 (${media}) has no alt text`);
    await t.http().patch(`/v1/media/${media}`).set(bearer(t.adminKey)).send({ alt: 'described' }).expect(200);
    expect((await post({ text: 'pic', media: [media], targets: [{ accountId: webhook }, { accountId: linkedin }] })).status).toBe(201);
  });

  it("takes as many images as each target's platform: 5 are refused for Bluesky and a webhook by name, and go to LinkedIn (up to 20)", async () => {
    const ids = await Promise.all([1, 2, 3, 4, 5].map(async () => uploadImage(t, t.adminKey, await makeImage('png'))));
    const before = await postCount();
    const res = await post({ text: 'many', media: ids, targets: [{ accountId: bluesky }, { accountId: linkedin }] });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('targets.0 (bluesky): 5 images attached, the limit is 4');
    const hook = await post({ text: 'many', media: ids, targets: [{ accountId: linkedin }, { accountId: webhook }] });
    expect(hook.status).toBe(400);
    expect(hook.body.message).toBe('targets.1 (webhook): 5 images attached, the limit is 4');
    expect(await postCount()).toBe(before);
    expect((await post({ text: 'many', media: ids, targets: [{ accountId: linkedin }] })).status).toBe(201);
    expect((await post({ text: 'four', media: ids.slice(0, 4), targets: [{ accountId: bluesky }, { accountId: linkedin }] })).status).toBe(
      201,
    );
  });

  it('re-checks the limits when a post is edited', async () => {
    const created = await post({ text: 'edit me', scheduledAt: '2030-01-01T00:00:00Z', targets: [{ accountId: bluesky }] });
    expect(created.status).toBe(201);
    const res = await t
      .http()
      .patch(`/v1/posts/${created.body.id}`)
      .set(bearer(t.adminKey))
      .send({ text: 'w'.repeat(301) });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^job [0-9a-f-]{36} \(bluesky\): text is 301 graphemes, the limit is 300$/);
  });
});
