import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { bootPageApp, criticalViolations, eventually, launchBrowser, logIn, newPage, PageApp, screenshot } from './support/browser';
import { bearer } from './support/config';
import { createPost, createWebhookAccount, waitForJob } from './support/engine';
import { Receiver, startReceiver, verifySignature } from './support/receiver';

/**
 * The page's Event webhooks section (owners): each endpoint with its latest deliveries and their
 * outcomes, "Send again" for a failed one, and a failing endpoint that does not slow the posts
 * going to the same host.
 */
describe('settings page: event webhooks, in a browser', () => {
  let browser: Browser;
  let t: PageApp;
  let context: BrowserContext;
  let page: Page;
  let receiver: Receiver;
  /** What the event endpoint answers now (the blog at /hook always takes its posts). */
  let eventsAnswer = 400;

  beforeAll(async () => {
    receiver = await startReceiver((q) =>
      q.path === '/events' ? eventsAnswer : { status: 200, body: { url: 'https://blog.example.com/p' } },
    );
    browser = await launchBrowser();
    t = await bootPageApp({}, { engine: true });
    ({ context, page } = await newPage(browser));
    await logIn(page, t.baseUrl, t.adminKey);
  });
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await t?.close();
    await receiver?.close();
  });

  const visible = (l: Locator) => l.first().waitFor({ state: 'visible', timeout: 15_000 });
  const endpointRow = () => page.getByTestId('endpoint');
  const deliveries = () => endpointRow().getByTestId('delivery');

  it('adds an endpoint from the page and shows its secret once', async () => {
    await page.getByRole('link', { name: 'Events' }).click();
    await page.waitForURL(`${t.baseUrl}/settings/events`);
    await visible(page.getByTestId('no-endpoints'));
    await page.getByLabel('Address (https)').fill(receiver.urlFor('/events'));
    await page.getByLabel('Description (optional)').fill('Team chat relay');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await visible(page.getByText('This is the only time Herald shows this secret.'));
    const secret = await page.getByLabel('Signing secret').inputValue();
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole('link', { name: 'Done' }).click();
    await visible(endpointRow().getByText('Team chat relay'));
    expect(await page.content()).not.toContain(secret);
    await visible(endpointRow().getByText('post.published, post.failed'));
    expect(await criticalViolations(page)).toEqual([]);

    // The secret signs what the endpoint receives.
    const account = await createWebhookAccount(t, t.adminKey, receiver.urlFor('/hook'));
    const post = await createPost(t, t.adminKey, { text: 'First', targets: [{ accountId: account.id }] });
    await waitForJob(t, t.adminKey, post.jobs[0].id, (j) => j.status === 'succeeded');
    const [event] = await eventually(
      'the post.published event',
      () => Promise.resolve(receiver.requests.filter((q) => q.path === '/events')),
      (r) => r.length >= 1,
    );
    verifySignature(secret, event);
  });

  it('shows a failed delivery with its HTTP status and attempts, and sends it again', async () => {
    // The endpoint refused the first event with a 400: permanent, the delivery failed at once.
    await page.goto(`${t.baseUrl}/settings/events`);
    await eventually(
      'the failed delivery on the page',
      async () => {
        await page.reload();
        return deliveries().count();
      },
      (n) => n === 1,
    );
    const row = deliveries().first();
    await visible(row.getByText('HTTP 400'));
    expect(await row.getByTestId('delivery-status').textContent()).toBe('failed');
    expect(await row.getByTestId('delivery-attempts').textContent()).toBe('1');

    eventsAnswer = 200;
    await row.getByRole('button', { name: 'Send again' }).click();
    await visible(page.getByText('The post.published event is queued to be sent again.'));
    await eventually(
      'the delivery succeeded',
      async () => {
        await page.reload();
        return deliveries().first().getAttribute('data-status');
      },
      (s) => s === 'succeeded',
    );
    await visible(deliveries().first().getByText('HTTP 200'));
    expect(await deliveries().first().getByRole('button', { name: 'Send again' }).count()).toBe(0);
    const sent = receiver.requests.filter((q) => q.path === '/events').map((q) => JSON.parse(q.body) as { id: string });
    expect(sent).toHaveLength(2);
    expect(sent[1].id).toBe(sent[0].id);
  });

  it('a failing endpoint shows its attempts and open circuit while the posts to the same host go out at once', async () => {
    eventsAnswer = 503;
    const account = await createWebhookAccount(t, t.adminKey, receiver.urlFor('/hook'), { name: 'Same host blog' });
    const posts = await Promise.all(
      Array.from({ length: 8 }, (_, i) => createPost(t, t.adminKey, { text: `Steady ${i}`, targets: [{ accountId: account.id }] })),
    );
    const jobs = await Promise.all(posts.map((p) => waitForJob(t, t.adminKey, p.jobs[0].id, (j) => j.status === 'succeeded')));
    expect(jobs.map((j) => j.attempts.length)).toEqual(jobs.map(() => 1));

    await eventually(
      "the endpoint's open circuit on the page",
      async () => {
        await page.reload();
        return endpointRow().getByTestId('endpoint-circuit').count();
      },
      (n) => n === 1,
    );
    await visible(endpointRow().getByTestId('endpoint-circuit').getByText('failures in a row'));
    await visible(deliveries().getByText('HTTP 503'));
    const attempts = (await deliveries().getByTestId('delivery-attempts').allTextContents()).map(Number);
    expect(attempts.some((n) => n >= 1)).toBe(true);
    // The blog's account is untouched by the endpoint's failures.
    const blog = (await t.http().get(`/v1/accounts/${account.id}`).set(bearer(t.adminKey)).expect(200)).body;
    expect(blog.circuit).toMatchObject({ state: 'closed', consecutiveFailures: 0 });
    expect(await criticalViolations(page)).toEqual([]);
    await screenshot(page, 'settings-events.png');
  });

  it('pauses, resumes and removes an endpoint', async () => {
    await page.goto(`${t.baseUrl}/settings/events`);
    await endpointRow().getByRole('button', { name: 'Pause' }).click();
    await visible(page.getByText('Paused: nothing is sent to'));
    expect(await endpointRow().getByTestId('endpoint-status').textContent()).toBe('Paused');
    await endpointRow().getByRole('button', { name: 'Resume' }).click();
    await visible(page.getByText('Resumed: waiting events go to'));
    await endpointRow().getByRole('button', { name: 'Remove' }).click();
    await visible(page.getByText('Removed. Its waiting deliveries were cancelled.'));
    await visible(page.getByTestId('no-endpoints'));
    const list = await t.http().get('/v1/event-subscriptions').set(bearer(t.adminKey)).expect(200);
    expect(list.body.data).toEqual([]);
  });
});
