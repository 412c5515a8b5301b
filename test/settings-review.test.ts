import type { Browser } from 'playwright-core';
import {
  bootPageApp,
  criticalViolations,
  launchBrowser,
  logIn,
  newPage,
  overflowsHorizontally,
  PageApp,
  PHONE,
  screenshot,
} from './support/browser';
import { bearer } from './support/config';
import { createPost, createWebhookAccount } from './support/engine';
import { newWorkspace, Workspace } from './support/mail';

/**
 * The review page in a real Chromium (docs/settings.md, "Comments and client review links"): a
 * person of the team comments and makes a link beside the post; the reviewer opens it in a fresh
 * browser context with no cookie and no login, answers under a name; the team sees the answer;
 * a revoked link opens nothing.
 */
describe('client review in the browser', () => {
  let t: PageApp;
  let browser: Browser;
  let ws: Workspace;
  let postId: string;

  beforeAll(async () => {
    t = await bootPageApp();
    browser = await launchBrowser();
    ws = await newWorkspace(t, 'Northwind');
    const blog = await createWebhookAccount(t, ws.key, 'http://127.0.0.1:9/hook');
    const post = await createPost(t, ws.key, {
      title: 'Winter launch',
      text: 'Our winter collection is here: warm coats, bright scarves, and free delivery until Friday. ❄️',
      link: 'https://example.com/winter',
      scheduledAt: new Date(Date.now() + 2 * 86_400_000).toISOString(),
      targets: [{ accountId: blog.id }],
    });
    postId = post.id;
    // Another post of the workspace, which the reviewer must never see.
    await createPost(t, ws.key, {
      text: 'Internal: price rise in March',
      scheduledAt: new Date(Date.now() + 86_400_000).toISOString(),
      targets: [{ accountId: blog.id }],
    });
  });
  afterAll(async () => {
    await browser.close();
    await t.close();
  });

  it('goes from a comment and a link on the settings page to a reviewer asking for changes, and back to the team', async () => {
    const team = await newPage(browser);
    await logIn(team.page, t.baseUrl, ws.key, `/settings/posts/${postId}/review`);
    await team.page.getByLabel('Add a comment').fill('Ready for the client?');
    await team.page.getByRole('button', { name: 'Comment', exact: true }).click();
    await team.page.getByText('Comment added.').waitFor();
    await team.page.getByRole('button', { name: 'Make a review link' }).click();
    const url = await team.page.getByTestId('review-url').inputValue();
    expect(url).toMatch(new RegExp(`^${t.baseUrl}/review/[A-Za-z0-9_-]{43}$`));

    // The reviewer: another browser context, no cookie, no login.
    const reviewer = await newPage(browser);
    expect(await reviewer.context.cookies()).toEqual([]);
    await reviewer.page.goto(url);
    await reviewer.page.getByRole('heading', { name: 'A post to review' }).waitFor();
    const article = reviewer.page.getByTestId('review-post');
    expect(await article.getByTestId('review-target').innerText()).toContain('Our winter collection is here');
    const body = await reviewer.page.locator('body').innerText();
    expect(body).not.toContain('Internal: price rise');
    expect(body).not.toContain('Ready for the client?');
    expect(body).not.toContain('Northwind');
    expect(await reviewer.page.locator('a[href^="/settings"]').count()).toBe(0);
    expect(await criticalViolations(reviewer.page)).toEqual([]);

    // Asking for changes needs a comment: the browser's own check first.
    await reviewer.page.getByLabel('Your name').fill('Clara from Northwind Retail');
    await reviewer.page.getByLabel(/^Comment/).fill('Please say "until Sunday": the offer was extended.');
    await reviewer.page.getByRole('button', { name: 'Ask for changes' }).click();
    await reviewer.page.getByTestId('answered').waitFor();
    expect(await reviewer.page.getByTestId('review-comment').innerText()).toContain('changes requested');
    await screenshot(reviewer.page, 'review-page.png');

    await reviewer.page.setViewportSize(PHONE);
    expect(await overflowsHorizontally(reviewer.page)).toBe(false);

    // The team sees it beside the post, and over the API.
    // (Not a reload: the page that showed the link answered a form, which a reload would send again.)
    await team.page.goto(`${t.baseUrl}/settings/posts/${postId}/review`);
    const comments = team.page.getByTestId('comment');
    expect(await comments.count()).toBe(2);
    expect(await comments.nth(1).innerText()).toMatch(
      /Clara from Northwind Retail[\s\S]*reviewer, through a review link[\s\S]*changes requested[\s\S]*until Sunday/,
    );
    const api = await t.http().get(`/v1/posts/${postId}/comments`).set(bearer(ws.key)).expect(200);
    expect(api.body.data[1]).toMatchObject({
      verdict: 'changes_requested',
      author: { kind: 'reviewer', name: 'Clara from Northwind Retail' },
    });

    // Revoked: the reviewer's next visit gets the plain "no longer valid" page.
    await team.page.getByRole('button', { name: 'Revoke this link' }).click();
    await team.page.getByText('The review link is revoked').waitFor();
    const gone = await reviewer.page.goto(url);
    expect(gone?.status()).toBe(404);
    expect(await reviewer.page.locator('body').innerText()).toContain('This review link is no longer valid');
    await team.context.close();
    await reviewer.context.close();
  });
});
