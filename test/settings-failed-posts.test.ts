import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { bootPageApp, criticalViolations, eventually, launchBrowser, logIn, newPage, PageApp, screenshot } from './support/browser';
import { killJobs } from './support/dlq';
import { connectBlueskyAccount, createPost, createWebhookAccount } from './support/engine';
import { startPds, TestBskyAccount, TestPdsHandle } from './support/pds';
import { Receiver, startReceiver } from './support/receiver';
import { bearer } from './support/config';

/**
 * The failed-posts pages in a real Chromium (issue 9), with the worker running, a real Bluesky
 * PDS and a real loopback receiver: edit a dead Bluesky post past the 300-grapheme limit (the
 * live counter and the server both refuse it), fix it, requeue it and read the new text back from
 * the PDS; bulk-requeue three; a post text of <script>alert(1)</script> renders as text.
 */
describe('settings page: failed posts, in a browser', () => {
  let browser: Browser;
  let t: PageApp;
  let pds: TestPdsHandle;
  let receiver: Receiver;
  let context: BrowserContext;
  let page: Page;
  let blog: string;

  beforeAll(async () => {
    [browser, pds, receiver] = await Promise.all([launchBrowser(), startPds(), startReceiver(() => 200)]);
    t = await bootPageApp({}, { engine: true });
    blog = (await createWebhookAccount(t, t.adminKey, receiver.urlFor('/hook'))).id;
    await t.http().patch(`/v1/accounts/${blog}`).set(bearer(t.adminKey)).send({ name: 'Company blog' }).expect(200);
    ({ context, page } = await newPage(browser));
    page.on('dialog', (dialog) => {
      throw new Error(`a script ran on the page and opened a dialog: ${dialog.message()}`);
    });
    await logIn(page, t.baseUrl, t.adminKey);
  });
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await t?.close();
    await Promise.all([pds?.close(), receiver?.close()]);
  });

  const visible = (l: Locator) => l.first().waitFor({ state: 'visible', timeout: 15_000 });
  const text = (s: string) => visible(page.getByText(s, { exact: false }));
  const later = () => new Date(Date.now() + 3_600_000).toISOString();

  /** A dead job, made the way the engine leaves one (its post was scheduled for later so no worker took it first). */
  async function deadPost(accountId: string, postText: string, lastError = 'HTTP 400: the receiver rejected the payload'): Promise<string> {
    const post = await createPost(t, t.adminKey, { text: postText, targets: [{ accountId }], scheduledAt: later() });
    await killJobs(t.databaseUrl, [post.jobs[0].id], { lastError });
    return post.jobs[0].id;
  }

  function connectBluesky(account: TestBskyAccount): Promise<string> {
    return connectBlueskyAccount(t, t.adminKey, account, pds.url, 'Herald on Bluesky');
  }

  it('edits a dead Bluesky post: the counter and the server refuse 301 graphemes; fixed and requeued, the PDS gets the new text', async () => {
    const author = await pds.createAccount('pageauthor');
    const accountId = await connectBluesky(author);
    const jobId = await deadPost(
      accountId,
      'A first try that the PDS refused',
      'HTTP 400: InvalidRequest: Record/text must not be longer than 300 graphemes',
    );

    await page.goto(`${t.baseUrl}/settings/failed-posts`);
    await page.getByRole('link', { name: 'A first try that the PDS refused' }).click();
    await page.waitForURL(`${t.baseUrl}/settings/failed-posts/${jobId}`);
    expect(await criticalViolations(page)).toEqual([]);
    await text('InvalidRequest: Record/text must not be longer than 300 graphemes');

    // 289 letters and 12 family emoji: 301 graphemes (each family is one), far more code points.
    const family = '👨‍👩‍👧';
    const tooLong = `${'a'.repeat(289)}${family.repeat(12)}`;
    const box = page.getByLabel('Text', { exact: true });
    await box.fill(tooLong);
    await text('301 / 300 characters: 1 too many');
    expect(await box.getAttribute('aria-invalid')).toBe('true');
    await box.fill(`${'a'.repeat(289)}${family.repeat(11)}`);
    await text('300 / 300 characters');
    expect(await box.getAttribute('aria-invalid')).toBeNull();

    // The server refuses it as the API does, whatever the browser said; nothing is saved.
    await box.fill(tooLong);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await text('Not saved: bluesky: text is 301 graphemes, the limit is 300');
    expect(await page.getByLabel('Text', { exact: true }).inputValue()).toBe(tooLong);
    const unchanged = await t.http().get(`/v1/dlq/${jobId}`).set(bearer(t.adminKey));
    expect(unchanged.body.payload.text).toBe('A first try that the PDS refused');

    const fixed = `Fixed on the settings page ${family}`;
    await page.getByLabel('Text', { exact: true }).fill(fixed);
    await page.getByRole('button', { name: 'Save and requeue' }).click();
    await text('Saved. Requeued: it is going out now.');
    const records = await eventually(
      'the post to reach the PDS',
      async () =>
        (await pds.network.pds.getAgent().com.atproto.repo.listRecords({ repo: author.did, collection: 'app.bsky.feed.post' })).data
          .records,
      (r) => r.length > 0,
    );
    expect((records[0].value as { text: string }).text).toBe(fixed);
    // The page keeps the history: what people did, and the attempt with the new idempotency key.
    await page.reload();
    expect(await page.locator('.audit li').allTextContents()).toEqual([
      expect.stringMatching(/: edit by key “HERALD_API_KEY” \(\w+\)$/),
      expect.stringMatching(/: requeue by key “HERALD_API_KEY” \(\w+\)$/),
    ]);
    await visible(page.locator('table.attempts').getByText(`${jobId}.2`));
  });

  it('edits a dead Bluesky thread part by part: published parts read-only, the live counter on each part; requeued, it continues from part 3', async () => {
    const author = await pds.createAccount('pagethread');
    const accountId = await connectBluesky(author);
    // Part 3's link page cannot be read, so its link goes into its 290 graphemes: the PDS refuses it.
    const long = `${'Three '.repeat(48)}ab`;
    const post = await createPost(t, t.adminKey, {
      text: 'Thread part one',
      thread: [{ text: 'Thread part two' }, { text: long, link: 'http://127.0.0.1:9/gone' }, { text: 'Thread part four' }],
      targets: [{ accountId }],
    });
    const jobId = post.jobs[0].id;
    await eventually(
      'the thread to die at part 3',
      async () => (await t.http().get(`/v1/jobs/${jobId}`).set(bearer(t.adminKey))).body as { status: string },
      (j) => j.status === 'dead',
    );

    await page.goto(`${t.baseUrl}/settings/failed-posts/${jobId}`);
    expect(await criticalViolations(page)).toEqual([]);
    await text('A thread of 4 parts: 2 published');
    // Published parts are shown with where they are, and have no fields.
    await visible(page.getByRole('link', { name: 'See part 1' }));
    await visible(page.getByRole('link', { name: 'See part 2' }));
    expect(await page.getByLabel('Text', { exact: true }).count()).toBe(0);
    expect(await page.getByLabel('Text of part 2').count()).toBe(0);

    const part3 = page.getByLabel('Text of part 3');
    expect(await part3.inputValue()).toBe(long);
    const family = '👨‍👩‍👧';
    await part3.fill(`${'a'.repeat(289)}${family.repeat(12)}`);
    await visible(page.locator('#thread-1-text-count').getByText('301 / 300 characters: 1 too many'));
    expect(await part3.getAttribute('aria-invalid')).toBe('true');
    // Each part has its own counter: part 4's still counts its own text.
    await visible(page.locator('#thread-2-text-count').getByText('16 / 300 characters'));

    // The server refuses it as the API does; nothing is saved.
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await text('Not saved: bluesky: thread.1: text is 301 graphemes, the limit is 300');
    const unchanged = await t.http().get(`/v1/dlq/${jobId}`).set(bearer(t.adminKey));
    expect(unchanged.body.payload.thread[1].text).toBe(long);

    await page.getByLabel('Text of part 3').fill(`Part three, fixed ${family}`);
    await page.getByLabel('Link of part 3 (optional)').fill('');
    await page.getByRole('button', { name: 'Save and requeue' }).click();
    await text('Saved. Requeued: it is going out now.');
    const records = await eventually(
      'the rest of the thread to reach the PDS',
      async () =>
        (await pds.network.pds.getAgent().com.atproto.repo.listRecords({ repo: author.did, collection: 'app.bsky.feed.post' })).data
          .records,
      (r) => r.length >= 4,
    );
    expect(records.map((r) => (r.value as { text: string }).text).sort()).toEqual(
      ['Thread part one', 'Thread part two', `Part three, fixed ${family}`, 'Thread part four'].sort(),
    );
  });

  it('bulk-requeues three selected posts and the receiver gets all three', async () => {
    const ids = [];
    for (const n of [1, 2, 3]) ids.push(await deadPost(blog, `Bulk post ${n}`));
    const other = await deadPost(blog, 'Not selected');
    receiver.reset();
    await page.goto(`${t.baseUrl}/settings/failed-posts?account=${blog}`);
    for (const n of [1, 2, 3]) await page.getByRole('checkbox', { name: new RegExp(`Select the post “Bulk post ${n}”`) }).check();
    await page.getByRole('button', { name: 'Requeue selected' }).click();
    await text('3 posts back in the queue.');
    const got = await receiver.waitFor(3, 15_000);
    expect(got.map((r) => JSON.parse(r.body).data.text).sort()).toEqual(['Bulk post 1', 'Bulk post 2', 'Bulk post 3']);
    await visible(page.getByRole('link', { name: 'Not selected' }));
    expect(await page.getByRole('link', { name: /Bulk post/ }).count()).toBe(0);
    const left = await t.http().get(`/v1/jobs/${other}`).set(bearer(t.adminKey));
    expect(left.body.status).toBe('dead');
  });

  it('renders a post text of <script>alert(1)</script> as text on every page', async () => {
    const evil = '<script>alert(1)</script>';
    const post = await createPost(t, t.adminKey, {
      text: evil,
      title: '<img src=x onerror=alert(2)>',
      targets: [{ accountId: blog }],
      scheduledAt: later(),
    });
    await page.goto(`${t.baseUrl}/settings/posts`);
    await visible(page.getByText(evil, { exact: true }));
    await visible(page.getByText('<img src=x onerror=alert(2)>', { exact: true }));
    expect(await page.locator('script:not([src])').count()).toBe(0);
    expect(await page.locator('main img').count()).toBe(0);
    expect(await criticalViolations(page)).toEqual([]);

    await killJobs(t.databaseUrl, [post.jobs[0].id], { lastError: `HTTP 400: ${evil}` });
    await page.goto(`${t.baseUrl}/settings/failed-posts`);
    await visible(page.getByRole('link', { name: evil }));
    await page.getByRole('link', { name: evil }).click();
    expect(await page.getByLabel('Text', { exact: true }).inputValue()).toBe(evil);
    await visible(page.getByText(`HTTP 400: ${evil}`).first());
    expect(await page.locator('script:not([src])').count()).toBe(0);
  });

  it('discards a post from its page, and refuses to requeue one whose account is disabled unless asked to let it wait', async () => {
    const discardMe = await deadPost(blog, 'Discard me');
    await page.goto(`${t.baseUrl}/settings/failed-posts/${discardMe}`);
    await page.getByRole('button', { name: 'Discard' }).click();
    await text('Discarded. It is kept with its history, out of the failed posts.');
    expect((await t.http().get(`/v1/jobs/${discardMe}`).set(bearer(t.adminKey))).body.status).toBe('discarded');

    const waiting = await deadPost(blog, 'Wait for the account');
    await t.http().patch(`/v1/accounts/${blog}`).set(bearer(t.adminKey)).send({ status: 'disabled' }).expect(200);
    await page.goto(`${t.baseUrl}/settings/failed-posts/${waiting}`);
    await page.getByRole('button', { name: 'Requeue as it is' }).click();
    await text('Not requeued: account "Company blog" is disabled');
    await page.getByRole('button', { name: 'Requeue anyway (it waits until the account is fixed)' }).click();
    await text('Requeued: it waits (paused) until its account is fixed.');
    expect((await t.http().get(`/v1/jobs/${waiting}`).set(bearer(t.adminKey))).body.status).toBe('paused');
    await t.http().patch(`/v1/accounts/${blog}`).set(bearer(t.adminKey)).send({ status: 'active' }).expect(200);
  });

  it('filters the list by platform and error text, and shows it clearly (screenshot for the docs)', async () => {
    await deadPost(blog, 'Launch notes for the blog', 'HTTP 410: the endpoint is gone');
    await deadPost(blog, 'Weekly digest of the changelog', "poison: media 3f0c… no longer exists; edit the post's media");
    await page.goto(`${t.baseUrl}/settings/failed-posts`);
    await visible(page.getByRole('link', { name: 'Launch notes for the blog' }));
    expect(await criticalViolations(page)).toEqual([]);
    await screenshot(page, 'settings-failed-posts.png');

    await page.getByLabel('Platform').selectOption('bluesky');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/provider=bluesky/);
    expect(await page.getByRole('link', { name: 'Launch notes for the blog' }).count()).toBe(0);

    await page.goto(`${t.baseUrl}/settings/failed-posts`);
    await page.getByLabel('Error text').fill('endpoint is gone');
    await page.getByRole('button', { name: 'Filter' }).click();
    await visible(page.getByRole('link', { name: 'Launch notes for the blog' }));
    expect(await page.getByRole('link', { name: 'Weekly digest of the changelog' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Requeue all that match' }).click();
    await text('1 post back in the queue.');
  });
});
