import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { wallTimeOf } from '../src/common/zoned-time';
import {
  bootPageApp,
  criticalViolations,
  DESKTOP,
  launchBrowser,
  logIn,
  overflowsHorizontally,
  PageApp,
  PHONE,
  screenshot,
} from './support/browser';
import { connectBlueskyAccount, createWebhookAccount, waitForPost } from './support/engine';
import { makeImage } from './support/media';
import { pollUntil } from './support/poll';
import { startPds, TestBskyAccount, TestPdsHandle } from './support/pds';
import { Receiver, startReceiver } from './support/receiver';
import { bearer } from './support/config';
import { FakeMastodon, startFakeMastodon } from './support/fake-mastodon';

/**
 * The composer and the calendar in a real Chromium (issue 20), with the worker running, the real
 * Bluesky PDS and a loopback receiver as the blog's webhook. The person's browser is in
 * America/New_York (UTC-05:00 in December; the process runs in UTC): what they type is their
 * wall time, what Herald stores is the instant. (Zones with other offsets, half hours and clock
 * changes are src/common/zoned-time.spec.ts's.)
 *
 * The first test schedules a post a minute or so ahead and edits it; the others run meanwhile; the
 * last waits (event-driven, bounded) for the PDS and the receiver to get the edited version.
 */
describe('settings page: composer and calendar, in a browser', () => {
  const ZONE = 'America/New_York';
  const family = '👨‍👩‍👧';
  let browser: Browser;
  let t: PageApp;
  let pds: TestPdsHandle;
  let receiver: Receiver;
  let context: BrowserContext;
  let page: Page;
  let author: TestBskyAccount;
  let blog: string;
  let sky: string;
  /** A Mastodon account on a loopback instance whose limit is 640 (test/support/fake-mastodon.ts). */
  let mastodon: FakeMastodon;
  let toot: string;
  /** What the first test scheduled: the post, the instant it chose, the edited text, the alt text. */
  const scheduled = { postId: '', at: new Date(0), text: '', alt: 'A red square: the Herald logo' };

  beforeAll(async () => {
    [browser, pds, receiver, mastodon] = await Promise.all([
      launchBrowser(),
      startPds(),
      startReceiver((req) =>
        req.path === '/page'
          ? {
              status: 200,
              headers: { 'content-type': 'text/html; charset=utf-8' },
              body: '<!doctype html><html><head><meta property="og:title" content="Release notes, December"><meta property="og:description" content="Everything new in Herald"></head><body></body></html>',
            }
          : 200,
      ),
      startFakeMastodon(),
    ]);
    mastodon.maxCharacters = 640;
    t = await bootPageApp({}, { engine: true });
    blog = (await createWebhookAccount(t, t.adminKey, receiver.urlFor('/hook'), { name: 'Company blog' })).id;
    author = await pds.createAccount('composer');
    sky = await connectBlueskyAccount(t, t.adminKey, author, pds.url, 'Herald on Bluesky');
    toot = (
      await t
        .http()
        .post('/v1/accounts')
        .set(bearer(t.adminKey))
        .send({ provider: 'mastodon', name: 'Toot', config: { instanceUrl: mastodon.url, accessToken: mastodon.issueToken() } })
        .expect(201)
    ).body.id as string;
    context = await browser.newContext({ viewport: DESKTOP, locale: 'en-GB', timezoneId: ZONE });
    page = await context.newPage();
    page.on('pageerror', (err) => {
      throw err;
    });
    await logIn(page, t.baseUrl, t.adminKey);
  });
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await t?.close();
    await Promise.all([pds?.close(), receiver?.close(), mastodon?.close()]);
  });

  const visible = (l: Locator) => l.first().waitFor({ state: 'visible', timeout: 15_000 });
  const text = (p: Page, s: string) => visible(p.getByText(s, { exact: false }));
  const counter = (p: Page) => p.locator('#counters li');
  const posts = async () =>
    (await t.http().get('/v1/posts?limit=100').set(bearer(t.adminKey)).expect(200)).body.data as {
      id: string;
      status: string;
      text: string;
    }[];

  it('writes a post with an emoji family and an image with alt text to Bluesky and the blog, schedules it a minute or so ahead in New York time, sees it on the calendar, and edits it once', async () => {
    await page.goto(`${t.baseUrl}/settings/compose`);
    // The browser's own zone, shown with its offset.
    expect(await page.getByLabel('Time zone').inputValue()).toBe(ZONE);
    await text(page, 'Times are in America/New_York (UTC-05:00)');

    const first = `Launch day ${family} with the whole family`;
    await page.getByLabel('Text', { exact: true }).fill(first);
    await page.getByLabel(/Herald on Bluesky/).check();
    await page.getByLabel(/Company blog/).check();
    // Counted as each platform counts: the family is one grapheme on Bluesky, five code points on the blog.
    const graphemes = [...new Intl.Segmenter('en', { granularity: 'grapheme' }).segment(first)].length;
    expect(graphemes).toBe([...first].length - 4);
    expect((await counter(page).allTextContents()).sort()).toEqual([
      `Company blog (Blog webhook): ${[...first].length} / 10000 characters`,
      `Herald on Bluesky (Bluesky): ${graphemes} / 300 characters`,
    ]);

    // The image, uploaded on the page with its (required) alt text.
    await page
      .getByLabel('Add an image')
      .setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: await makeImage('png', 64, 64) });
    await page.getByRole('button', { name: 'Upload image' }).click();
    await text(page, 'the image was not added: describe it');
    await page
      .getByLabel('Add an image')
      .setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: await makeImage('png', 64, 64) });
    await page.getByLabel('Alt text for the new image').fill(scheduled.alt);
    await page.getByRole('button', { name: 'Upload image' }).click();
    await text(page, 'Image added.');
    await visible(page.locator('ol.images img').and(page.getByAltText(scheduled.alt)));
    expect(await page.getByLabel('Text', { exact: true }).inputValue()).toBe(first);

    // The first whole minute at least 50 s ahead, as the person's wall time in their zone: time
    // enough to schedule and edit it (about 10 s here) before it is due, and the last test waits
    // for it (it was two minutes and more, which kept the file waiting 2.5 minutes).
    const at = new Date(Math.ceil((Date.now() + 50_000) / 60_000) * 60_000);
    const wall = wallTimeOf(at, ZONE);
    await page.getByLabel('Date', { exact: true }).fill(wall.date);
    await page.getByLabel('Time', { exact: true }).fill(wall.time);
    expect(await criticalViolations(page)).toEqual([]);
    await screenshot(page, 'settings-compose.png');
    await page.getByRole('button', { name: 'Schedule', exact: true }).click();
    await text(page, `Scheduled for ${wall.date} ${wall.time}, America/New_York (UTC-05:00), to 2 accounts.`);
    expect(new URL(page.url()).pathname).toBe('/settings/calendar');

    // On the calendar, at the person's time, with both accounts waiting.
    const entry = page.locator('.cal-post', { hasText: 'Launch day' });
    await visible(entry);
    expect(await entry.locator('time').textContent()).toBe(wall.time);
    expect((await entry.locator('.cal-targets li').allTextContents()).sort()).toEqual([
      'Company blog Blog webhook: waiting',
      'Herald on Bluesky Bluesky: waiting',
    ]);
    expect(await criticalViolations(page)).toEqual([]);
    await screenshot(page, 'settings-calendar.png');

    const created = (await posts()).find((p) => p.text === first)!;
    scheduled.postId = created.id;
    const stored = (await t.http().get(`/v1/posts/${created.id}`).set(bearer(t.adminKey)).expect(200)).body;
    expect(stored.scheduledAt).toBe(at.toISOString());
    expect(stored.media).toHaveLength(1);

    // Edited once, from the calendar: same time, new text.
    await entry.getByRole('link', { name: /Edit or move/ }).click();
    await page.waitForURL(`${t.baseUrl}/settings/posts/${created.id}/edit`);
    expect(await page.getByLabel('Time', { exact: true }).inputValue()).toBe(wall.time);
    expect(await page.getByLabel('Date', { exact: true }).inputValue()).toBe(wall.date);
    scheduled.text = `Launch day ${family}, edited on the calendar`;
    await page.getByLabel('Text', { exact: true }).fill(scheduled.text);
    await page.getByRole('button', { name: 'Save changes' }).click();
    await text(page, `Saved: scheduled for ${wall.date} ${wall.time}, America/New_York (UTC-05:00), to 2 accounts.`);
    scheduled.at = at;
    const edited = (await t.http().get(`/v1/posts/${created.id}`).set(bearer(t.adminKey)).expect(200)).body;
    expect({ text: edited.text, scheduledAt: edited.scheduledAt, status: edited.status }).toEqual({
      text: scheduled.text,
      scheduledAt: at.toISOString(),
      status: 'scheduled',
    });
  }, 240_000);

  it("refuses a post over Bluesky's limit: the counter and the server's message agree, and nothing is saved", async () => {
    const before = (await posts()).length;
    await page.goto(`${t.baseUrl}/settings/compose`);
    await page.locator(`#acc-${sky}`).check();
    const tooLong = `${'a'.repeat(289)}${family.repeat(12)}`;
    await page.getByLabel('Text', { exact: true }).fill(tooLong);
    expect(await counter(page).allTextContents()).toEqual(['Herald on Bluesky (Bluesky): 301 / 300 characters: 1 too many']);
    expect(await page.getByLabel('Text', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await page.getByRole('button', { name: 'Schedule', exact: true }).click();
    await text(page, 'Not saved: Herald on Bluesky (bluesky): text is 301 graphemes, the limit is 300');
    expect(await counter(page).allTextContents()).toEqual(['Herald on Bluesky (Bluesky): 301 / 300 characters: 1 too many']);
    expect(await page.getByLabel('Text', { exact: true }).inputValue()).toBe(tooLong);
    expect((await posts()).length).toBe(before);

    // The link card is read on request only, through the guarded client.
    await page.getByLabel('Text', { exact: true }).fill('Read the notes');
    await page.getByLabel('Link (optional)').fill(receiver.urlFor('/page'));
    await page.getByRole('button', { name: 'Preview', exact: true }).click();
    await text(page, 'Bluesky will build a link card');
    expect(receiver.requests.filter((r) => r.path === '/page')).toHaveLength(0);
    await page.getByRole('button', { name: 'Fetch the link card' }).click();
    await text(page, 'Release notes, December');
    await text(page, 'Everything new in Herald');
    expect(receiver.requests.filter((r) => r.path === '/page')).toHaveLength(1);
  });

  it("counts a Mastodon account's text as its instance does while typing: its own limit, links as 23, the link and the content warning", async () => {
    await page.goto(`${t.baseUrl}/settings/compose`);
    await page.locator(`#acc-${toot}`).check();
    await page.getByLabel('Text', { exact: true }).fill(`Read ${'https://example.com/notes/'.repeat(8)}`);
    // "Read " and one long link: 5 + 23.
    expect(await counter(page).allTextContents()).toEqual(['Toot (Mastodon): 28 / 640 characters']);
    await page.getByLabel('Link (optional)').fill('https://example.com/more');
    await page.getByLabel('Content warning (optional)').fill('Long read');
    // The link on a paragraph of its own (2 + 23) and the content warning (9) count too.
    expect(await counter(page).allTextContents()).toEqual(['Toot (Mastodon): 62 / 640 characters']);
    await page.getByRole('button', { name: 'Preview', exact: true }).click();
    await text(page, 'Content warning: Long read');
    expect(await counter(page).allTextContents()).toEqual(['Toot (Mastodon): 62 / 640 characters']);
  });

  it('saves a draft (kept, never queued, listed on the calendar), then schedules it', async () => {
    await page.goto(`${t.baseUrl}/settings/compose`);
    await page.getByLabel('Text', { exact: true }).fill('A draft for next week');
    await page.getByLabel(/Company blog/).check();
    await page.getByRole('button', { name: 'Save as draft' }).click();
    await text(page, 'Saved as a draft: it is kept, and never published until you schedule it.');
    const id = /\/settings\/posts\/([0-9a-f-]{36})\/edit$/.exec(page.url())?.[1] ?? '';
    const draft = (await t.http().get(`/v1/posts/${id}`).set(bearer(t.adminKey)).expect(200)).body;
    expect(draft).toMatchObject({ status: 'draft', scheduledAt: null, jobs: [], draftTargets: [{ accountId: blog }] });

    await page.goto(`${t.baseUrl}/settings/calendar`);
    await visible(page.locator('section', { hasText: 'Drafts' }).getByRole('link', { name: 'A draft for next week' }));
    await page.getByRole('link', { name: 'A draft for next week' }).click();
    const later = wallTimeOf(new Date(Date.now() + 7 * 86_400_000), ZONE);
    await page.getByLabel('Date', { exact: true }).fill(later.date);
    await page.getByLabel('Time', { exact: true }).fill('10:30');
    await page.getByRole('button', { name: 'Schedule', exact: true }).click();
    await text(page, `Saved: scheduled for ${later.date} 10:30, America/New_York (UTC-05:00), to 1 account.`);
    const now = (await t.http().get(`/v1/posts/${id}`).set(bearer(t.adminKey)).expect(200)).body;
    expect(now.status).toBe('scheduled');
    expect(now.jobs.map((j: { accountId: string; status: string }) => [j.accountId, j.status])).toEqual([[blog, 'scheduled']]);
    expect(wallTimeOf(new Date(now.scheduledAt), ZONE)).toEqual({ date: later.date, time: '10:30' });
  });

  it('writes a thread of two on the page: "Make it a thread" adds one part, removing it makes a single post again; parts added, reordered and removed, each with its counter; kept as a draft, then published to a Bluesky account as a post and its reply and to the blog in one delivery', async () => {
    const threader = await pds.createAccount('threader');
    const threads = await connectBlueskyAccount(t, t.adminKey, threader, pds.url, 'Threads on Bluesky');
    const partCounters = (i: number) => page.locator(`#counters-part-${i} li`);

    await page.goto(`${t.baseUrl}/settings/compose`);
    await page.getByLabel('Text', { exact: true }).fill('A thread of two 🧵');
    await page.locator(`#acc-${threads}`).check();
    await page.getByLabel(/Company blog/).check();
    await page.getByRole('button', { name: 'Make it a thread' }).click();
    await text(page, 'Thread started: part 2 is below the text');
    // One further part: a thread of two.
    expect(await page.getByLabel('Part 2', { exact: true }).count()).toBe(1);
    expect(await page.getByLabel('Part 3', { exact: true }).count()).toBe(0);
    // What was typed and chosen survives the round trip.
    expect(await page.getByLabel('Text', { exact: true }).inputValue()).toBe('A thread of two 🧵');
    expect(await page.locator(`#acc-${threads}`).isChecked()).toBe(true);

    // Removing the only further part makes the post a single post again.
    await page.getByRole('button', { name: 'Remove part 2' }).click();
    await text(page, 'Part removed: the post is a single post again');
    expect(await page.getByLabel('Part 2', { exact: true }).count()).toBe(0);
    await visible(page.getByRole('group', { name: 'Thread (optional)' }));
    await page.getByRole('button', { name: 'Make it a thread' }).click();
    await text(page, 'Thread started: part 2 is below the text');

    await page.getByLabel('Part 2', { exact: true }).fill(`Part two ${family}`);
    // Each part's own counter, counted as each chosen platform counts, as the person types.
    expect((await partCounters(0).allTextContents()).sort()).toEqual([
      `Company blog (Blog webhook): ${[...`Part two ${family}`].length} / 10000 characters`,
      'Threads on Bluesky (Bluesky): 10 / 300 characters',
    ]);
    await page.getByRole('button', { name: 'Add a part' }).click();
    await text(page, 'Part 3 added.');
    await page.getByLabel('Part 3', { exact: true }).fill('To be removed');
    await page.getByRole('button', { name: 'Move part 3 up' }).click();
    await text(page, 'Parts reordered.');
    expect(await page.getByLabel('Part 2', { exact: true }).inputValue()).toBe('To be removed');
    expect(await page.getByLabel('Part 3', { exact: true }).inputValue()).toBe(`Part two ${family}`);
    await page.getByRole('button', { name: 'Remove part 2' }).click();
    await text(page, 'Part removed from the thread');
    expect(await page.getByLabel('Part 3', { exact: true }).count()).toBe(0);
    expect(await page.getByLabel('Part 2', { exact: true }).inputValue()).toBe(`Part two ${family}`);
    await visible(page.getByRole('group', { name: 'Thread (1 further part)' }));
    // The server's counters agree with the script's after the round trip.
    expect((await partCounters(0).allTextContents()).sort()).toEqual([
      `Company blog (Blog webhook): ${[...`Part two ${family}`].length} / 10000 characters`,
      'Threads on Bluesky (Bluesky): 10 / 300 characters',
    ]);
    expect(await criticalViolations(page)).toEqual([]);
    await screenshot(page, 'settings-compose-thread.png');

    // Kept as a draft, with its thread; opened again, it shows the part as saved.
    await page.getByRole('button', { name: 'Save as draft' }).click();
    await text(page, 'Saved as a draft');
    const id = /\/settings\/posts\/([0-9a-f-]{36})\/edit$/.exec(page.url())?.[1] ?? '';
    const draft = (await t.http().get(`/v1/posts/${id}`).set(bearer(t.adminKey)).expect(200)).body;
    expect(draft.status).toBe('draft');
    expect(draft.thread).toEqual([{ text: `Part two ${family}`, link: null, media: [] }]);
    expect(await page.getByLabel('Part 2', { exact: true }).inputValue()).toBe(`Part two ${family}`);

    await page.getByRole('button', { name: 'Publish now' }).click();
    await text(page, 'Saved: publishing now to 2 accounts.');
    type Reply = { root: { uri: string }; parent: { uri: string } };
    const records = await pollUntil(
      'the thread to reach the PDS',
      async () =>
        (await pds.network.pds.getAgent().com.atproto.repo.listRecords({ repo: threader.did, collection: 'app.bsky.feed.post' })).data
          .records as unknown as { uri: string; value: { text: string; reply?: Reply } }[],
      (r) => r.length >= 2,
      60_000,
      200,
    );
    const byText = (s: string) => records.find((r) => r.value.text === s)!;
    const [one, two] = ['A thread of two 🧵', `Part two ${family}`].map(byText);
    expect(records).toHaveLength(2);
    expect(one.value.reply).toBeUndefined();
    expect(two.value.reply).toMatchObject({ root: { uri: one.uri }, parent: { uri: one.uri } });
    const hook = await pollUntil(
      'the blog to get the thread',
      () => receiver.requests.find((r) => r.path === '/hook' && r.body.includes('A thread of two')),
      (r) => r !== undefined,
      60_000,
      200,
    );
    expect((JSON.parse(hook!.body).data.thread as { text: string }[]).map((p) => p.text)).toEqual([`Part two ${family}`]);
    expect(receiver.requests.some((r) => r.body.includes('To be removed'))).toBe(false);
  }, 180_000);

  it('works on a phone with the keyboard alone: writes a draft, and the calendar fits the screen', async () => {
    const phone = await browser.newContext({
      viewport: PHONE,
      locale: 'en-GB',
      timezoneId: 'America/Sao_Paulo',
      hasTouch: true,
      isMobile: true,
    });
    try {
      const p = await phone.newPage();
      p.on('pageerror', (err) => {
        throw err;
      });
      await logIn(p, t.baseUrl, t.adminKey, '/settings/compose');
      expect(await overflowsHorizontally(p)).toBe(false);
      // Keyboard only: Tab to each field, type, Space to tick, Enter to send.
      const tabTo = async (id: string, value?: string) => {
        for (let i = 0; i < 80; i++) {
          await p.keyboard.press('Tab');
          const focused = await p.evaluate<{ id: string; value: string }>(
            '({ id: document.activeElement && document.activeElement.id, value: document.activeElement && document.activeElement.value })',
          );
          if (focused.id === id && (value === undefined || focused.value === value)) return;
        }
        throw new Error(`Tab never reached #${id}`);
      };
      await tabTo('text');
      await p.keyboard.type('Written on a phone, keyboard only');
      await tabTo(`acc-${blog}`);
      await p.keyboard.press('Space');
      expect(await counter(p).allTextContents()).toEqual([`Company blog (Blog webhook): 33 / 10000 characters`]);
      const onDraft = () => p.evaluate<boolean>("!!document.activeElement && document.activeElement.getAttribute('value') === 'draft'");
      for (let i = 0; i < 80 && !(await onDraft()); i++) await p.keyboard.press('Tab');
      expect(await onDraft()).toBe(true);
      await p.keyboard.press('Enter');
      await text(p, 'Saved as a draft');
      expect(await overflowsHorizontally(p)).toBe(false);
      expect(await criticalViolations(p)).toEqual([]);

      await p.goto(`${t.baseUrl}/settings/calendar?view=month`);
      await visible(p.getByRole('heading', { name: /\w+ \d{4}/, level: 2 }));
      expect(await overflowsHorizontally(p)).toBe(false);
      expect(await criticalViolations(p)).toEqual([]);
      await text(p, 'America/Sao_Paulo (UTC-03:00)');
      await screenshot(p, 'settings-calendar-phone.png');
    } finally {
      await phone.close();
    }
  });

  it('delivers the edited version to the PDS and the receiver at the chosen minute', async () => {
    expect(scheduled.postId).not.toBe('');
    // Bounded and event-driven: until the post is out, at most a minute past its time.
    const deadline = Math.max(30_000, scheduled.at.getTime() + 60_000 - Date.now());
    const hook = await pollUntil(
      'the receiver to get the scheduled post',
      () => receiver.requests.find((r) => r.path === '/hook' && r.body.includes('edited on the calendar')),
      (r) => r !== undefined,
      deadline,
      200,
    );
    expect(JSON.parse(hook!.body).data.text).toBe(scheduled.text);
    const records = await pollUntil(
      'the post to reach the PDS',
      async () =>
        (await pds.network.pds.getAgent().com.atproto.repo.listRecords({ repo: author.did, collection: 'app.bsky.feed.post' })).data
          .records,
      (r) => r.length > 0,
      Math.max(30_000, scheduled.at.getTime() + 60_000 - Date.now()),
      200,
    );
    const record = records[0].value as { text: string; embed?: { images?: { alt: string }[] } };
    expect(record.text).toBe(scheduled.text);
    expect(record.embed?.images?.map((i) => i.alt)).toEqual([scheduled.alt]);
    // Not before the minute chosen: every attempt started at or after it.
    // The PDS has the record as soon as it answers; Herald records the success after that answer,
    // so the post may still read "publishing" for a moment.
    const post = await waitForPost(t, t.adminKey, scheduled.postId, (p) => p.status !== 'publishing');
    expect(post.status).toBe('published');
    for (const job of post.jobs as { id: string }[]) {
      const detail = (await t.http().get(`/v1/jobs/${job.id}`).set(bearer(t.adminKey)).expect(200)).body;
      expect(new Date(detail.attempts[0].startedAt).getTime()).toBeGreaterThanOrEqual(scheduled.at.getTime());
    }
    expect(hook!.receivedAt.getTime()).toBeGreaterThanOrEqual(scheduled.at.getTime());
    // Nothing of the first version went anywhere.
    expect(receiver.requests.some((r) => r.body.includes('with the whole family'))).toBe(false);
  }, 240_000);
});
