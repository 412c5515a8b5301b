import { decodeHTML } from 'entities';
import { bootTestApp, TestApp } from './support/app';
import { insertAccount } from './support/dlq';
import { makeImage, uploadImage } from './support/media';
import { loggedInAgent, PageAgent } from './support/settings-http';
import { bearer } from './support/config';

/**
 * The composer's image limit over HTTP (no browser needed: the limit is the server's): it follows
 * the chosen accounts' platforms, 20 for a LinkedIn post, 4 as soon as a Bluesky account (or a
 * blog webhook) is among them, and an image past it is not added, saying why.
 */
describe('settings page: images per post in the composer', () => {
  let t: TestApp;
  let key: string;
  let linkedin: string;
  let sky: string;
  let agent: PageAgent;
  let csrf: string;

  beforeAll(async () => {
    t = await bootTestApp({ config: { allowPrivateUrls: true } });
    const ws = await t.http().post('/v1/workspaces').set(bearer(t.adminKey)).send({ name: 'Pictures' }).expect(201);
    key = ws.body.apiKey.key as string;
    // The page reads only the accounts' platforms: rows are all it needs.
    linkedin = await insertAccount(t.databaseUrl, ws.body.workspace.id as string, 'linkedin', 'Herald on LinkedIn');
    sky = await insertAccount(t.databaseUrl, ws.body.workspace.id as string, 'bluesky', 'Herald on Bluesky');
    ({ agent, csrf } = await loggedInAgent(t, key));
  });
  afterAll(async () => {
    await t?.close();
  });

  const images = async (n: number) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push(await uploadImage(t, key, await makeImage('png', 20 + i, 10), `picture ${i + 1}`));
    return ids;
  };

  /** Sends the form with these accounts and images, and a new image file when given; the page's text, unescaped. */
  const send = async (accounts: string[], media: string[], file?: Buffer) => {
    const req = agent.post('/settings/compose').field('_csrf', csrf).field('text', 'Pictures').field('action', 'preview');
    for (const a of accounts) req.field('accounts', a);
    for (const m of media) req.field('media', m);
    if (file) req.field('newAlt', 'one more').attach('file', file, { filename: 'more.png', contentType: 'image/png' });
    const res = await req;
    return { status: res.status, text: decodeHTML(res.text) };
  };
  const canUpload = (text: string) => text.includes('name="file"');

  it('offers 20 images for LinkedIn alone and 4 with Bluesky too; an image past the limit is not added, and the page says why', async () => {
    const five = await images(5);
    const none = await send([], []);
    expect(none.text).toContain('Images (0 of 4)');
    expect(none.text).toContain(
      "Each platform takes its own number of images per post (Bluesky 4, LinkedIn 20, Mastodon 4, Blog webhook 4): a post takes as many as the smallest of its accounts'.",
    );

    const linkedinOnly = await send([linkedin], five);
    expect(linkedinOnly.status).toBe(200);
    expect(linkedinOnly.text).toContain('Images (5 of 20)');
    expect(canUpload(linkedinOnly.text)).toBe(true);

    const both = await send([linkedin, sky], five);
    expect(both.text).toContain('Images (5 of 4)');
    expect(canUpload(both.text)).toBe(false);
    // The preview says what the intake will say: Bluesky refuses the fifth image, LinkedIn takes them.
    expect(both.text).toContain('5 images attached, the limit is 4');
    const refused = await send([linkedin, sky], five.slice(0, 4), await makeImage('png', 90, 10));
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('the image was not added: a post to the chosen accounts takes at most 4 images (remove one first)');
    expect(refused.text).toContain('Images (4 of 4)');

    // LinkedIn alone: up to 20, then no more.
    const nineteen = [...five, ...(await images(14))];
    const twentieth = await send([linkedin], nineteen, await makeImage('png', 91, 10));
    expect(twentieth.status).toBe(200);
    expect(twentieth.text).toContain('Image added.');
    expect(twentieth.text).toContain('Images (20 of 20)');
    expect(canUpload(twentieth.text)).toBe(false);
    const all = [...twentieth.text.matchAll(/<input type="hidden" name="media" value="([0-9a-f-]{36})">/g)].map((m) => m[1]);
    expect(all).toHaveLength(20);
    expect(all.slice(0, 19)).toEqual(nineteen);
    const past = await send([linkedin], all, await makeImage('png', 92, 10));
    expect(past.status).toBe(400);
    expect(past.text).toContain('the image was not added: a post to the chosen accounts takes at most 20 images (remove one first)');
  });
});
