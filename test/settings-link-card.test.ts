import { randomUUID } from 'node:crypto';
import { decodeHTML } from 'entities';
import { decideLinkCard, LINK_CARD_WINDOW_MS, quotaKey } from '../src/posts/link-card-quota';
import { LinkCardQuotaRepository } from '../src/posts/link-card-quota.repository';
import { pngBomb } from './support/png-bomb';
import { bootTestApp, TestApp } from './support/app';
import { insertAccount } from './support/dlq';
import { createWebhookAccount } from './support/engine';
import { makeImage, uploadImage } from './support/media';
import { Receiver, startReceiver } from './support/receiver';
import { loggedInAgent, PageAgent } from './support/settings-http';
import { bearer } from './support/config';

/**
 * The composer's "Fetch the link card" (issue 28, defect 10) over HTTP, with a loopback server
 * standing in for the pages linked: a card is fetched only for accounts that show one, its
 * image is used only when it is a raster image within the documented pixel limit, and each
 * person (a session's person or API key) fetches at most 20 cards a minute, counted in
 * PostgreSQL so that every Herald process applies the same count.
 */
describe('settings page: the link card', () => {
  let t: TestApp;
  let other: TestApp;
  let site: Receiver;
  let key: string;
  let blog: string;
  let sky: string;
  let image: string;

  const page = (title: string, imagePath?: string) => ({
    status: 200,
    headers: { 'content-type': 'text/html; charset=utf-8' },
    body: `<!doctype html><html><head><meta property="og:title" content="${title}">${
      imagePath ? `<meta property="og:image" content="${site.urlFor(imagePath)}">` : ''
    }</head><body></body></html>`,
  });
  const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="1200" height="630"><rect width="1200" height="630" fill="red"/></svg>';

  beforeAll(async () => {
    const card = await makeImage('png', 1200, 630);
    // 36,600,000 pixels: over the documented 36,152,319, under the 40,000,000 once decoded here.
    const bomb = pngBomb(6100, 6000);
    site = await startReceiver((req) => {
      switch (req.path) {
        case '/release':
          return page('Release notes, December', '/card.png');
        case '/plain':
          return page('A page without an image');
        case '/vector':
          return page('A page with an SVG image', '/logo.svg');
        case '/huge':
          return page('A page with a huge image', '/huge.png');
        case '/card.png':
          return { headers: { 'content-type': 'image/png' }, body: card };
        case '/logo.svg':
          return { headers: { 'content-type': 'image/svg+xml' }, body: svg };
        case '/huge.png':
          return { headers: { 'content-type': 'image/png' }, body: bomb };
        default:
          return 404;
      }
    });
    t = await bootTestApp({ config: { allowPrivateUrls: true } });
    // A second process on the same database: the count is one for both.
    other = await bootTestApp({ databaseUrl: t.databaseUrl, config: { allowPrivateUrls: true } });
    const ws = await t.http().post('/v1/workspaces').set(bearer(t.adminKey)).send({ name: 'Cards' }).expect(201);
    key = ws.body.apiKey.key as string;
    blog = (await createWebhookAccount(t, key, site.urlFor('/hook'), { name: 'Company blog' })).id;
    // The card is read by the page, not through the account: a row is all the composer needs.
    sky = await insertAccount(t.databaseUrl, ws.body.workspace.id as string, 'bluesky', 'Herald on Bluesky');
    image = await uploadImage(t, key, await makeImage('png', 64, 64), 'A red square');
  });
  afterAll(async () => {
    await other?.close();
    await t?.close();
    await site?.close();
  });

  /** Presses "Fetch the link card" with these accounts (and images); the answer, its text unescaped. */
  const fetchCard = async (agent: PageAgent, csrf: string, link: string, accounts: string[], media: string[] = []) => {
    const res = await agent
      .post('/settings/compose')
      .type('form')
      .send({ _csrf: csrf, text: 'Read this', link, accounts, media, action: 'card' });
    return { status: res.status, text: decodeHTML(res.text), retryAfter: res.headers['retry-after'] as string | undefined };
  };
  const fetchesOf = (path: string) => site.requests.filter((r) => r.path === path).length;

  it('fetches nothing when no chosen account shows a card, and says why', async () => {
    const { agent, csrf } = await loggedInAgent(t, key);
    const link = site.urlFor('/release');
    const why = 'no link card was fetched: none of the chosen accounts shows one (Bluesky does, for a post with a link and no image)';
    // Only the blog chosen.
    const blogOnly = await fetchCard(agent, csrf, link, [blog]);
    expect(blogOnly.status).toBe(400);
    expect(blogOnly.text).toContain(why);
    // No account at all.
    const none = await fetchCard(agent, csrf, link, []);
    expect(none.status).toBe(400);
    expect(none.text).toContain(why);
    // Bluesky with an image: the link goes in the text, no card.
    const withImage = await fetchCard(agent, csrf, link, [sky], [image]);
    expect(withImage.status).toBe(400);
    expect(withImage.text).toContain(why);
    expect(fetchesOf('/release')).toBe(0);
    expect(site.requests).toEqual([]);
    // With Bluesky chosen and no image, it is fetched (and shown).
    const shown = await fetchCard(agent, csrf, link, [sky, blog]);
    expect(shown.status).toBe(200);
    expect(shown.text).toContain('<p class="link-card-title">Release notes, December</p>');
    expect(shown.text).toMatch(/<img src="data:image\/jpeg;base64,[A-Za-z0-9+/=]+" alt="">/);
    expect(fetchesOf('/release')).toBe(1);
    expect(fetchesOf('/card.png')).toBe(1);
  });

  it('shows the card without an SVG image, or one over 36,152,319 pixels, and says why', async () => {
    // Another key of the workspace: a count of its own.
    const editor = await t.http().post('/v1/api-keys').set(bearer(key)).send({ name: 'images', role: 'editor' }).expect(201);
    const { agent, csrf } = await loggedInAgent(t, editor.body.key as string);
    const vector = await fetchCard(agent, csrf, site.urlFor('/vector'), [sky]);
    expect(vector.status).toBe(200);
    expect(vector.text).toContain('<p class="link-card-title">A page with an SVG image</p>');
    expect(vector.text).not.toContain('data:image/');
    expect(vector.text).toContain(
      `the card would have no image: ${site.urlFor('/logo.svg')} could not be used (the image is image/svg+xml, not PNG, JPEG, WebP or GIF (read from its bytes): other formats, SVG among them, are not decoded)`,
    );
    const huge = await fetchCard(agent, csrf, site.urlFor('/huge'), [sky]);
    expect(huge.status).toBe(200);
    expect(huge.text).toContain('<p class="link-card-title">A page with a huge image</p>');
    expect(huge.text).not.toContain('data:image/');
    expect(huge.text).toContain(
      `the card would have no image: ${site.urlFor('/huge.png')} could not be used (the image is 6100 × 6000 pixels (36,600,000); the limit is 36,152,319 pixels)`,
    );
  });

  it('fetches at most 20 link cards a minute per person, counted once for every process, then says how long to wait', async () => {
    const owner = await t.http().post('/v1/api-keys').set(bearer(key)).send({ name: 'busy', role: 'owner' }).expect(201);
    const here = await loggedInAgent(t, owner.body.key as string);
    const there = await loggedInAgent(other, owner.body.key as string);
    const link = site.urlFor('/plain');
    const before = fetchesOf('/plain');
    for (let i = 0; i < 20; i++) {
      const { agent, csrf } = i % 2 === 0 ? here : there;
      const res = await fetchCard(agent, csrf, link, [sky]);
      expect([i, res.status]).toEqual([i, 200]);
      expect(res.text).toContain('<p class="link-card-title">A page without an image</p>');
    }
    expect(fetchesOf('/plain')).toBe(before + 20);
    for (const { agent, csrf } of [here, there]) {
      const refused = await fetchCard(agent, csrf, link, [sky]);
      expect(refused.status).toBe(429);
      const wait = Number(refused.retryAfter);
      expect(wait).toBeGreaterThanOrEqual(1);
      expect(wait).toBeLessThanOrEqual(60);
      expect(refused.text).toContain(`too many link cards: at most 20 a minute per person; wait ${wait} s and fetch it again`);
      expect(refused.text).toContain('>Read this</textarea>'); // the form is kept
    }
    expect(fetchesOf('/plain')).toBe(before + 20);
    // Someone else (another key) is not held back.
    const { agent, csrf } = await loggedInAgent(t, key);
    const theirs = await fetchCard(agent, csrf, link, [sky]);
    expect(theirs.status).toBe(200);
    expect(fetchesOf('/plain')).toBe(before + 21);
  });

  it('counts in one statement: fetches from two processes at once get one count each, and a window ends a minute after it opened', async () => {
    const here = t.app.get(LinkCardQuotaRepository);
    const there = other.app.get(LinkCardQuotaRepository);
    const principal = quotaKey({ kind: 'person', id: randomUUID() });
    const opened = new Date('2030-01-01T10:00:00Z');
    const at = (ms: number) => new Date(opened.getTime() + ms);
    // 30 at the same instant, half through each process: no two read the same count.
    const counts = await Promise.all(
      Array.from({ length: 30 }, (_, i) => (i % 2 ? here : there).count(principal, opened, LINK_CARD_WINDOW_MS)),
    );
    expect(counts.map((c) => c.fetches).sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(counts.filter((c) => decideLinkCard(c, opened).allowed)).toHaveLength(20);
    // Still the same window just before the minute ends …
    const late = await here.count(principal, at(59_999), LINK_CARD_WINDOW_MS);
    expect(late).toEqual({ openedAt: opened, fetches: 31 });
    expect(decideLinkCard(late, at(59_999))).toEqual({ allowed: false, retryAfterS: 1 });
    // … and a new one from the minute on.
    const next = await there.count(principal, at(60_000), LINK_CARD_WINDOW_MS);
    expect(next).toEqual({ openedAt: at(60_000), fetches: 1 });
  });
});
