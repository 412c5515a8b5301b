import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { addDays, wallTimeOf, weekdayOf, zonedToInstant } from '../src/common/zoned-time';
import { bootPageApp, criticalViolations, DESKTOP, launchBrowser, logIn, PageApp, screenshot } from './support/browser';
import { bearer } from './support/config';
import { createWebhookAccount } from './support/engine';

/**
 * The posting queue on the page, in a real Chromium (docs/settings.md "Posting queue"): the
 * workspace's slots edited in a form (a mistake named by its day, nothing saved), an account
 * given its own slots and back, "Add to queue" in the composer taking the next free slot and
 * saying which, and the calendar's week with the free slots and a slot the spring clock change
 * skips ("02:30 does not exist on this day; 03:00"). The browser is in Europe/Berlin.
 */
describe('settings page: the posting queue, in a browser', () => {
  const ZONE = 'Europe/Berlin';
  let browser: Browser;
  let t: PageApp;
  let context: BrowserContext;
  let page: Page;
  let blog: string;
  let news: string;

  beforeAll(async () => {
    browser = await launchBrowser();
    t = await bootPageApp();
    blog = (await createWebhookAccount(t, t.adminKey, 'http://127.0.0.1:9/blog', { name: 'Company blog' })).id;
    news = (await createWebhookAccount(t, t.adminKey, 'http://127.0.0.1:9/news', { name: 'Newsroom' })).id;
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
  });

  const visible = (l: Locator) => l.first().waitFor({ state: 'visible', timeout: 15_000 });
  const api = async (path: string) => (await t.http().get(path).set(bearer(t.adminKey)).expect(200)).body as Record<string, unknown>;
  const save = () => Promise.all([page.waitForURL(/\/settings\/queue/), page.getByRole('button', { name: 'Save slots' }).click()]);

  it('says in the composer why a post cannot be queued while the queue has no slots, and saves nothing', async () => {
    await page.goto(`${t.baseUrl}/settings/compose`);
    await page.getByLabel('Text', { exact: true }).fill('Too early for the queue');
    await page.getByLabel(/Company blog/).check();
    await page.getByRole('button', { name: 'Add to queue' }).click();
    await visible(page.getByText('queue: the posting queue has no slots; set them with PUT /v1/settings/queue'));
    expect(await page.getByLabel('Text', { exact: true }).inputValue()).toBe('Too early for the queue');
    expect((await api('/v1/posts?limit=10')).data).toEqual([]);
  });

  it('edits the workspace’s slots, names a mistake by its day and saves nothing then', async () => {
    await page.goto(`${t.baseUrl}/settings/queue`);
    await page.getByLabel('Time zone').selectOption(ZONE);
    for (const day of ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday']) {
      await page.getByLabel(day, { exact: true }).fill('9:00, 15:30, 21:00');
    }
    await page.getByLabel('Sunday', { exact: true }).fill('02:30, 9:00, 15:30, 21:00');
    await page.getByLabel('Tuesday', { exact: true }).fill('9am, 15:30');
    await save();
    await visible(page.getByText('Tuesday: “9am” is not a time (HH:MM, from 00:00 to 23:59)'));
    // What was typed stays in the form; nothing was saved.
    expect(await page.getByLabel('Tuesday', { exact: true }).inputValue()).toBe('9am, 15:30');
    expect(await api('/v1/settings/queue')).toEqual({ timezone: 'UTC', slots: [] });

    await page.getByLabel('Tuesday', { exact: true }).fill('09:00, 15:30, 21:00');
    await save();
    await visible(page.getByText('Saved: the queue has 22 slots a week in Europe/Berlin.'));
    const saved = (await api('/v1/settings/queue')) as { timezone: string; slots: { day: string; time: string }[] };
    expect(saved.timezone).toBe(ZONE);
    expect(saved.slots).toHaveLength(22);
    expect(saved.slots.slice(0, 3)).toEqual([
      { day: 'mon', time: '09:00' },
      { day: 'mon', time: '15:30' },
      { day: 'mon', time: '21:00' },
    ]);
    expect(await page.getByLabel('Sunday', { exact: true }).inputValue()).toBe('02:30, 09:00, 15:30, 21:00');
    expect(await criticalViolations(page)).toEqual([]);
    await screenshot(page, 'settings-queue.png');
  });

  it('gives an account its own slots, and takes them away again', async () => {
    await page.goto(`${t.baseUrl}/settings/queue`);
    await Promise.all([
      page.waitForURL(/\/settings\/queue\/accounts\//),
      page.getByRole('link', { name: 'Give it its own slots (Newsroom)' }).click(),
    ]);
    await visible(page.getByText("This account follows the workspace's slots"));
    await page.getByLabel('Time zone').selectOption('America/New_York');
    for (const day of ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday']) {
      await page.getByLabel(day, { exact: true }).fill('');
    }
    await page.getByLabel('Wednesday', { exact: true }).fill('08:15');
    await save();
    await visible(page.getByText("Saved: the account has its own 1 slot a week in America/New_York, instead of the workspace's."));
    await visible(page.getByText('Its own slots: 1 slot a week in America/New_York'));
    expect(await api(`/v1/accounts/${news}/queue`)).toEqual({
      timezone: 'America/New_York',
      slots: [{ day: 'wed', time: '08:15' }],
      source: 'account',
    });
    await page.getByRole('link', { name: 'Change its slots (Newsroom)' }).click();
    await Promise.all([
      page.waitForURL(/\/settings\/queue$/),
      page.getByRole('button', { name: "Use the workspace's slots again" }).click(),
    ]);
    await visible(page.getByText("Saved: the account follows the workspace's slots."));
    expect((await api(`/v1/accounts/${news}/queue`)).source).toBe('workspace');
  });

  it('adds a post to the queue from the composer, says which slot it took, and the calendar shows it and the free slots', async () => {
    await page.goto(`${t.baseUrl}/settings/compose`);
    await page.getByLabel('Text', { exact: true }).fill('Into the queue');
    await page.getByLabel(/Company blog/).check();
    await page.getByLabel(/Newsroom/).check();
    await Promise.all([page.waitForURL(/\/settings\/calendar/), page.getByRole('button', { name: 'Add to queue' }).click()]);
    const flash = page.locator('.flash-success');
    await visible(flash);
    expect(await flash.innerText()).toMatch(
      /^Added to the queue: the slot (Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday) (02:30|09:00|15:30|21:00) \(Europe\/Berlin\)(, which does not exist that day: 03:00)?, that is \d{4}-\d{2}-\d{2} \d{2}:\d{2}, Europe\/Berlin \(UTC\+0[12]:00\), to 2 accounts\.$/,
    );
    const listed = (await api('/v1/posts?limit=10')).data as {
      id: string;
      text: string;
      scheduledAt: string;
      queueSlot: { at: string } | null;
      jobs: { accountId: string }[];
    }[];
    const post = listed.find((p) => p.text === 'Into the queue')!;
    expect(post.jobs.map((j) => j.accountId).sort()).toEqual([blog, news].sort());
    expect(post.queueSlot?.at).toBe(post.scheduledAt);
    expect(Date.parse(post.scheduledAt)).toBeGreaterThan(Date.now());
    // The calendar opened on the slot's week: the post there, its slot taken.
    const clock = wallTimeOf(new Date(post.scheduledAt), ZONE).time;
    await visible(page.locator('.cal-post').filter({ hasText: 'Into the queue' }));
    await visible(page.locator('.queue-slot.taken').filter({ hasText: clock }));
    // The week after: every slot of it is still free.
    await page.getByRole('link', { name: 'Next week →' }).click();
    await visible(page.locator('.queue-slot').filter({ hasText: 'Free queue slot' }));
    expect(await page.locator('.queue-slot').count()).toBe(22);
    expect(await page.locator('.queue-slot.taken').count()).toBe(0);
    await screenshot(page, 'settings-queue-calendar.png');

    // The edit form says which slot the post holds.
    await page.goto(`${t.baseUrl}/settings/posts/${post.id}/edit`);
    expect(await page.locator('#queue-slot-held').innerText()).toMatch(
      /^In the queue: it holds the slot \w+day \d{2}:\d{2} \(Europe\/Berlin\)/,
    );
    await visible(page.getByRole('button', { name: 'Move to the queue' }));
  });

  it('marks on the calendar a slot the spring clock change skips: 02:30 moves to 03:00', async () => {
    // The next last Sunday of March still to come (the clocks go from 02:00 to 03:00 in Berlin).
    const today = wallTimeOf(new Date(), ZONE).date;
    const lastSundayOfMarch = (year: number) => addDays(`${year}-03-31`, -((weekdayOf(`${year}-03-31`) + 1) % 7));
    const thisYear = Number(today.slice(0, 4));
    const sunday = lastSundayOfMarch(thisYear) > today ? lastSundayOfMarch(thisYear) : lastSundayOfMarch(thisYear + 1);
    await page.goto(`${t.baseUrl}/settings/calendar?view=week&date=${sunday}&zone=${encodeURIComponent(ZONE)}`);
    const day = page.locator('li.day').filter({ has: page.locator('.day-label', { hasText: /^Sun/ }) });
    const moved = day.locator('.queue-slot').filter({ hasText: '02:30 does not exist on this day; 03:00' });
    await visible(moved);
    expect(await moved.locator('time').innerText()).toBe('03:00');
    // The other slots of that Sunday are where they are.
    expect(await day.locator('.queue-slot time').allInnerTexts()).toEqual(['03:00', '09:00', '15:30', '21:00']);
    expect(zonedToInstant(sunday, '02:30', ZONE).ok).toBe(false);
  });
});
