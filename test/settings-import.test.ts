import type { Browser, BrowserContext, Page } from 'playwright-core';
import { withClient } from './support/database';
import {
  bootPageApp,
  criticalViolations,
  launchBrowser,
  logIn,
  overflowsHorizontally,
  PageApp,
  PHONE,
  screenshot,
} from './support/browser';
import { createWebhookAccount } from './support/engine';
import { bearer } from './support/config';

/**
 * The CSV import on the settings page (docs/settings.md "Importing posts from a CSV file") in a
 * real Chromium, on a real app and database (the worker off: what is counted is what the page
 * created). The browser is in Europe/Paris (UTC+01:00 in winter), so a local time in the file
 * is stored as the instant an hour earlier in UTC.
 */
describe('settings page: CSV import, in a browser', () => {
  let browser: Browser;
  let t: PageApp;
  let context: BrowserContext;
  let page: Page;

  const postCount = () =>
    withClient(t.databaseUrl, async (db) => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM posts')).rows[0].n);
  const posts = async () =>
    (await t.http().get('/v1/posts?limit=200').set(bearer(t.adminKey)).expect(200)).body.data as {
      id: string;
      text: string;
      link: string | null;
      scheduledAt: string;
      jobs: { accountId: string }[];
    }[];

  let blog: string;
  let news: string;

  beforeAll(async () => {
    browser = await launchBrowser();
    t = await bootPageApp();
    blog = (await createWebhookAccount(t, t.adminKey, 'http://127.0.0.1:9/blog', { name: 'Company blog' })).id;
    news = (await createWebhookAccount(t, t.adminKey, 'http://127.0.0.1:9/news', { name: 'Newsletter' })).id;
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-GB', timezoneId: 'Europe/Paris' });
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

  /** Uploads `bytes` as a CSV file on the import page and presses "Check the file". */
  async function upload(bytes: Buffer | string, name = 'posts.csv'): Promise<void> {
    await page.goto(`${t.baseUrl}/settings/import`);
    await page
      .getByLabel('CSV file')
      .setInputFiles({ name, mimeType: 'text/csv', buffer: Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes, 'utf8') });
    await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/settings/import'),
      page.getByRole('button', { name: 'Check the file' }).click(),
    ]);
    await page.waitForLoadState('load');
  }

  const verdicts = async () =>
    page.locator('#import-rows tbody tr').evaluateAll((rows) =>
      rows.map((r) => ({
        row: Number(r.getAttribute('data-row')),
        verdict: (r.lastElementChild?.textContent ?? '').replace(/\s+/g, ' ').trim(),
      })),
    );

  it('shows every row’s verdict and creates nothing; "Create 3 posts" creates the ok rows; pressing it again creates nothing twice', async () => {
    const file =
      'text,accounts,time,link\n' +
      '"Our December release, finally",Company blog | Newsletter,2030-12-24 09:30,https://example.com/december\n' +
      'Tip of the week,newsletter,2030-12-25T08:00:00Z,\n' +
      '"Unknown account here",Company blog|Nobody,2030-12-26 10:00,\n' +
      '"=HYPERLINK(""http://evil.example"",""x"")",Company blog,2030-12-26 10:00,\n' +
      'Bad link,Company blog,2030-12-27 10:00,ftp://example.com/x\n' +
      '"A quoted\nline break",Company blog,2030-12-28 18:45,\n';
    const before = await postCount();
    await upload(file);
    expect(await page.locator('h1').textContent()).toBe('Check the import');
    expect(await verdicts()).toEqual([
      { row: 2, verdict: 'OK' },
      { row: 3, verdict: 'OK' },
      { row: 4, verdict: 'accounts: no account is named "Nobody"' },
      { row: 5, verdict: 'text: starts with "=", which a spreadsheet would run as a formula; rephrase the start of the cell' },
      { row: 6, verdict: 'link: link must be an absolute http(s) URL' },
      { row: 7, verdict: 'OK' },
    ]);
    await page.getByText('3 rows have a problem').waitFor();
    // Each time as it was read, in the zone.
    expect(await page.locator('#import-rows tbody tr td:nth-child(4)').allTextContents()).toEqual([
      '2030-12-24 09:30 (Europe/Paris)',
      '2030-12-25 09:00 (Europe/Paris)',
      '2030-12-26 10:00 (Europe/Paris)',
      '2030-12-26 10:00 (Europe/Paris)',
      '2030-12-27 10:00 (Europe/Paris)',
      '2030-12-28 18:45 (Europe/Paris)',
    ]);
    expect(await postCount()).toBe(before);
    expect(await criticalViolations(page)).toEqual([]);
    await screenshot(page, 'settings-import-preview.png');

    await Promise.all([
      page.waitForURL(/\/settings\/import\/confirm$/),
      page.getByRole('button', { name: 'Create 3 posts', exact: true }).click(),
    ]);
    expect((await page.locator('#import-created').textContent())?.trim()).toMatch(/^Created 3 posts\./);
    expect(await page.locator('#import-failed tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-row')))).toEqual([
      '4',
      '5',
      '6',
    ]);
    expect(await postCount()).toBe(before + 3);
    const created = (await posts()).filter((p) =>
      ['Our December release, finally', 'Tip of the week', 'A quoted\nline break'].includes(p.text),
    );
    const byText = Object.fromEntries(created.map((p) => [p.text, p]));
    // Paris is UTC+01:00 in December: 09:30 there is 08:30Z.
    expect(byText['Our December release, finally']).toMatchObject({
      scheduledAt: '2030-12-24T08:30:00.000Z',
      link: 'https://example.com/december',
    });
    expect(byText['Our December release, finally'].jobs.map((j) => j.accountId).sort()).toEqual([blog, news].sort());
    expect(byText['Tip of the week']).toMatchObject({ scheduledAt: '2030-12-25T08:00:00.000Z', link: null });
    expect(byText['Tip of the week'].jobs.map((j) => j.accountId)).toEqual([news]);
    expect(byText['A quoted\nline break'].scheduledAt).toBe('2030-12-28T17:45:00.000Z');

    // The posts appear on the scheduled posts page.
    await page.getByRole('link', { name: 'See the scheduled posts' }).click();
    await page.getByText('Our December release, finally').first().waitFor();
    await page.getByText('Tip of the week').first().waitFor();

    // The same file checked and created again (a second tab, a double submit): the same posts, none twice.
    await upload(file);
    await Promise.all([
      page.waitForURL(/\/settings\/import\/confirm$/),
      page.getByRole('button', { name: 'Create 3 posts', exact: true }).click(),
    ]);
    expect((await page.locator('#import-created').textContent())?.trim()).toMatch(/^Created 3 posts\./);
    await page.locator('#import-replayed').waitFor();
    expect(await postCount()).toBe(before + 3);
    await screenshot(page, 'settings-import-done.png');
  });

  it('fits a phone: the form and the check page without sideways scrolling', async () => {
    const phone = await browser.newContext({ viewport: PHONE, locale: 'en-GB', timezoneId: 'Europe/Paris' });
    const small = await phone.newPage();
    await logIn(small, t.baseUrl, t.adminKey, '/settings/import');
    expect(await overflowsHorizontally(small)).toBe(false);
    await small.getByLabel('CSV file').setInputFiles({
      name: 'phone.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(
        `text,accounts,time,link\n${'A rather long post text that wraps on a phone '.repeat(4)},Company blog | Newsletter,2030-12-24 09:30,https://example.com/a/long/path/that/does/not/wrap/easily\n`,
      ),
    });
    await small.getByRole('button', { name: 'Check the file' }).click();
    await small.locator('#import-rows').waitFor();
    expect(await overflowsHorizontally(small)).toBe(false);
    expect(await criticalViolations(small)).toEqual([]);
    await phone.close();
  });

  it('refuses a changed "Create" form (the file swapped in the page) and creates nothing', async () => {
    await upload('text,accounts,time\nHonest row,Company blog,2030-11-01 09:00\n');
    const before = await postCount();
    // The form's own fields, sent without its CSRF token (as another site's form would): refused.
    const fields = Object.fromEntries(
      await Promise.all(['csv', 'zone', 'sig'].map(async (n) => [n, await page.locator(`input[name="${n}"]`).inputValue()] as const)),
    );
    const forged = await page.request.post(`${t.baseUrl}/settings/import/confirm`, { multipart: fields });
    expect(forged.status()).toBe(403);
    expect(await postCount()).toBe(before);
    const other = Buffer.from('text,accounts,time\nSwapped row,Company blog,2030-11-01 09:00\n').toString('base64');
    await page.locator('input[name="csv"]').evaluate((input, value) => ((input as unknown as { value: string }).value = value), other);
    await page.getByRole('button', { name: 'Create 1 post', exact: true }).click();
    await page.getByText('this import form was changed or belongs to another workspace; nothing was created').waitFor();
    expect(await postCount()).toBe(before);
  });

  describe('a bad file gets a clear answer and creates nothing', () => {
    const rows = (n: number) => `text,accounts,time\n${'A post,Company blog,2030-10-01 09:00\n'.repeat(n)}`;
    it.each<[string, Buffer | string, RegExp]>([
      [
        'a broken file (a quote never closed)',
        'text,accounts,time\n"Hello,Company blog,2030-10-01 09:00\n',
        /the file is not valid CSV: a quote \("\) opens a cell that is never closed/,
      ],
      [
        'a file that is not UTF-8 (Latin-1)',
        Buffer.from('text,accounts,time\nÉté,Company blog,2030-10-01 09:00\n', 'latin1'),
        /the file is not UTF-8; save it as UTF-8/,
      ],
      ['10,000 rows', rows(10_000), /the file has 10,000 rows; an import takes at most 500/],
      ['an empty file', '', /the file is empty/],
      ['missing columns', 'text,time\nHello,2030-10-01 09:00\n', /the header row \(the first row\) lacks the column "accounts"/],
      [
        'a file over 1 MB',
        `text,accounts,time\n${'x'.repeat(1_100_000)},Company blog,queue\n`,
        /the file is too large; an import takes files up to 1 MB/,
      ],
    ])('%s', async (_what, bytes, message) => {
      const before = await postCount();
      await upload(bytes);
      const error = page.locator('#form-error');
      await error.waitFor();
      expect(await error.textContent()).toMatch(message);
      expect(await page.locator('h1').textContent()).toBe('Import posts');
      expect(await postCount()).toBe(before);
    });

    it('a file whose every row has a problem offers no "Create" button', async () => {
      const before = await postCount();
      await upload('text,accounts,time\n@SUM(1+1),Company blog,2030-10-01 09:00\nHello,Nobody,2030-10-01 09:00\n');
      expect(await verdicts()).toEqual([
        {
          row: 2,
          verdict: 'text: starts with "@" and what follows reads as a formula a spreadsheet would run; rephrase the start of the cell',
        },
        { row: 3, verdict: 'accounts: no account is named "Nobody"' },
      ]);
      expect(await page.getByRole('button', { name: /^Create/ }).count()).toBe(0);
      expect(await postCount()).toBe(before);
    });
  });
  it('reads times in the workspace’s zone (its posting queue’s) and queues the rows whose time is "queue", each in its own slot', async () => {
    await t
      .http()
      .put('/v1/settings/queue')
      .set(bearer(t.adminKey))
      .send({ timezone: 'America/New_York', slots: ['mon', 'tue', 'wed', 'thu', 'fri'].map((day) => ({ day, time: '10:00' })) })
      .expect(200);
    await page.goto(`${t.baseUrl}/settings/import`);
    expect(await page.getByLabel('Time zone').inputValue()).toBe('America/New_York');
    const file =
      'text,accounts,time\nQueued one,Company blog,queue\nQueued two,Company blog,QUEUE\nNew York morning,Newsletter,2030-12-24 09:30\n';
    const before = await postCount();
    await page.getByLabel('CSV file').setInputFiles({ name: 'queue.csv', mimeType: 'text/csv', buffer: Buffer.from(file) });
    await Promise.all([page.waitForURL(/\/settings\/import$/), page.getByRole('button', { name: 'Check the file' }).click()]);
    await page.locator('#import-rows').waitFor();
    expect(await verdicts()).toEqual([
      { row: 2, verdict: 'OK' },
      { row: 3, verdict: 'OK' },
      { row: 4, verdict: 'OK' },
    ]);
    expect(await page.locator('#import-rows tbody tr td:nth-child(4)').allTextContents()).toEqual([
      'the next free queue slot',
      'the next free queue slot',
      '2030-12-24 09:30 (America/New_York)',
    ]);
    expect(await postCount()).toBe(before);
    await Promise.all([
      page.waitForURL(/\/settings\/import\/confirm$/),
      page.getByRole('button', { name: 'Create 3 posts', exact: true }).click(),
    ]);
    expect((await page.locator('#import-created').textContent())?.trim()).toMatch(/^Created 3 posts\./);
    const all = (await t.http().get('/v1/posts?limit=200').set(bearer(t.adminKey)).expect(200)).body.data as {
      text: string;
      scheduledAt: string;
      queueSlot: { at: string; timezone: string } | null;
    }[];
    const one = all.find((p) => p.text === 'Queued one')!;
    const two = all.find((p) => p.text === 'Queued two')!;
    // Two slots, not one: weekdays at 10:00 in New York (15:00Z in December).
    expect(one.queueSlot?.at).toBe(one.scheduledAt);
    expect(two.queueSlot?.at).toBe(two.scheduledAt);
    expect(one.scheduledAt).not.toBe(two.scheduledAt);
    for (const at of [one.scheduledAt, two.scheduledAt]) expect(new Date(at).getUTCHours()).toBe(15);
    expect(all.find((p) => p.text === 'New York morning')?.scheduledAt).toBe('2030-12-24T14:30:00.000Z');
  });
});
