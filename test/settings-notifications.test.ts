import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { bootPageApp, criticalViolations, launchBrowser, logIn, newPage, PageApp } from './support/browser';
import { killJobs } from './support/dlq';
import { createPost, createWebhookAccount } from './support/engine';
import { loggedInAgent } from './support/settings-http';
import { bearer } from './support/config';

/**
 * The notifications page (issue 9 with issue 10's settings API): the digest and alert settings
 * through the same rules as PUT /v1/settings/notifications, a preview of the digest, and a
 * banner when no mail server is configured.
 */
describe('settings page: notifications, in a browser', () => {
  let browser: Browser;
  let t: PageApp;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    browser = await launchBrowser();
    t = await bootPageApp();
    ({ context, page } = await newPage(browser));
    await logIn(page, t.baseUrl, t.adminKey);
  });
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await t?.close();
  });

  const visible = (l: Locator) => l.first().waitFor({ state: 'visible', timeout: 15_000 });
  const text = (s: string) => visible(page.getByText(s, { exact: false }));
  const settings = async () => (await t.http().get('/v1/settings/notifications').set(bearer(t.adminKey))).body;

  it('says when no mail server is configured, and where the mails go instead', async () => {
    await page.getByRole('link', { name: 'Notifications' }).click();
    await page.waitForURL(`${t.baseUrl}/settings/notifications`);
    await text('No mail server is configured.');
    await visible(page.locator('#no-mail-server').getByText(`${t.config.dataDir}/outbox`));
    expect(await criticalViolations(page)).toEqual([]);
  });

  it("refuses a wrong address with the API's message and saves nothing; saves valid settings", async () => {
    await page.goto(`${t.baseUrl}/settings/notifications`);
    await page.getByLabel('Send the daily digest').check();
    await page.getByLabel('Recipients').fill('team@example.com\nbob');
    await page.getByRole('button', { name: 'Save' }).click();
    await text('Not saved: digest.recipients.1 "bob" is not a valid email address');
    expect(await page.getByLabel('Recipients').inputValue()).toBe('team@example.com\nbob');
    expect((await settings()).digest.enabled).toBe(false);

    await page.getByLabel('Recipients').fill('team@example.com\nops@example.com');
    await page.getByLabel('Hour').selectOption('7');
    await page.getByLabel('Time zone').selectOption('America/New_York');
    await page.getByLabel('Also send it on days with nothing to report').check();
    await page.getByRole('button', { name: 'Save' }).click();
    await text('Saved. The digest goes to 2 recipients every day at 07:00 America/New_York.');
    expect((await settings()).digest).toEqual({
      enabled: true,
      recipients: ['team@example.com', 'ops@example.com'],
      hour: 7,
      timezone: 'America/New_York',
      sendWhenEmpty: true,
    });
    // The form shows what was saved.
    expect(await page.getByLabel('Hour').inputValue()).toBe('7');
    expect(await page.getByLabel('Send the daily digest').isChecked()).toBe(true);

    await page.getByLabel('Send the daily digest').uncheck();
    await page.getByRole('button', { name: 'Save' }).click();
    await text('Saved. The daily digest is off.');
    expect((await settings()).digest.enabled).toBe(false);
    expect((await settings()).digest.recipients).toEqual(['team@example.com', 'ops@example.com']);
  });

  it('previews the digest with a link to a failed post, sending nothing', async () => {
    const account = await createWebhookAccount(t, t.adminKey, 'http://127.0.0.1:9/hook');
    const post = await createPost(t, t.adminKey, {
      text: 'Dead on arrival',
      targets: [{ accountId: account.id }],
      scheduledAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    await killJobs(t.databaseUrl, [post.jobs[0].id]);
    await page.goto(`${t.baseUrl}/settings/notifications`);
    await page.getByRole('button', { name: 'Preview the digest' }).click();
    await visible(page.getByRole('heading', { name: 'Digest preview' }));
    await visible(page.locator('pre').getByText(`${t.baseUrl}/settings/failed-posts/${post.jobs[0].id}`));
    expect(await criticalViolations(page)).toEqual([]);
  });
});

describe('settings page: notifications with a mail server', () => {
  it('shows no "no mail server" banner when SMTP_URL is set', async () => {
    const t = await bootPageApp({ smtpUrl: 'smtp://127.0.0.1:9', mailFrom: 'Herald <herald@example.com>' });
    try {
      const { agent } = await loggedInAgent(t);
      const res = await agent.get('/settings/notifications');
      expect(res.status).toBe(200);
      expect(res.text).toContain('Send the daily digest');
      expect(res.text).not.toContain('No mail server is configured');
    } finally {
      await t.close();
    }
  });
});
