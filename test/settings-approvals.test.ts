import type { Browser, Page } from 'playwright-core';
import { bootPageApp, criticalViolations, launchBrowser, logIn, newPage, PageApp, screenshot } from './support/browser';
import { bearer } from './support/config';
import { createWebhookAccount } from './support/engine';

/**
 * The settings page's "Waiting for approval" list and the composer where approval applies, in a
 * real Chromium (docs/settings.md "Approvals"). The workspace's mode is `editors`: an editor's
 * composer says "Submit for approval" and its post waits; a viewer sees the list without buttons;
 * an owner approves one post and sends another back with a comment, which the editor then reads
 * on the draft. The worker is off: approved jobs stay scheduled.
 */
describe('settings page: approvals, in a browser', () => {
  let browser: Browser;
  let t: PageApp;
  let editor: string;
  let viewer: string;
  let blog: string;

  const keyOf = async (role: 'editor' | 'viewer') =>
    (
      await t
        .http()
        .post('/v1/api-keys')
        .set(bearer(t.adminKey))
        .send({ name: `${role} key`, role })
        .expect(201)
    ).body.key as string;
  const postOf = async (id: string) => (await t.http().get(`/v1/posts/${id}`).set(bearer(t.adminKey)).expect(200)).body;
  const pageAs = async (key: string, next: string): Promise<Page> => {
    const { page } = await newPage(browser);
    await logIn(page, t.baseUrl, key, next);
    return page;
  };

  beforeAll(async () => {
    [browser, t] = await Promise.all([launchBrowser(), bootPageApp()]);
    blog = (await createWebhookAccount(t, t.adminKey, 'http://127.0.0.1:9/blog', { name: 'Company blog' })).id;
    [editor, viewer] = [await keyOf('editor'), await keyOf('viewer')];
    await t.http().put('/v1/settings/approvals').set(bearer(t.adminKey)).send({ mode: 'editors', clientApproval: false }).expect(200);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('lets an editor submit from the composer, shows viewers the list without buttons, and owners approve or send back', async () => {
    // The editor's composer asks for approval instead of scheduling.
    const ed = await pageAs(editor, '/settings/compose');
    await ed.getByLabel('Text', { exact: true }).fill('Spring sale starts Monday');
    await ed.getByLabel(/Company blog/).check();
    expect(await ed.getByRole('button', { name: 'Schedule', exact: true }).count()).toBe(0);
    await ed.getByRole('button', { name: 'Submit, to go out as soon as approved' }).click();
    await ed.waitForURL(/\/settings\/approvals$/);
    await ed.getByText('Submitted for approval: the owners are told by mail').waitFor();
    expect(await ed.getByRole('button', { name: /Approve/ }).count()).toBe(0);
    const pending = (await t.http().get('/v1/posts?status=pending_approval').set(bearer(t.adminKey)).expect(200)).body.data;
    expect(pending.map((p: { text: string }) => p.text)).toEqual(['Spring sale starts Monday']);
    const sale = pending[0].id as string;
    // A second post, by API, with a time.
    const launch = (
      await t
        .http()
        .post('/v1/posts')
        .set(bearer(editor))
        .send({
          text: 'Herald 2.0 launches today: approvals, review links and a posting queue.',
          targets: [{ accountId: blog }],
          scheduledAt: '2030-03-02T09:00:00Z',
        })
        .expect(201)
    ).body.id as string;

    const viewerPage = await pageAs(viewer, '/settings/approvals');
    const viewerRows = viewerPage.getByTestId('waiting').locator('li.approval');
    expect(await viewerRows.count()).toBe(2);
    expect(await viewerPage.getByRole('button', { name: /Approve|Send back/ }).count()).toBe(0);

    const owner = await pageAs(t.adminKey, '/settings/approvals');
    const rows = owner.getByTestId('waiting').locator('li.approval');
    expect(await rows.count()).toBe(2);
    const saleRow = owner.locator(`li[data-post="${sale}"]`);
    await saleRow.getByText('asked by key “editor key”').waitFor();
    await saleRow.getByText('Goes out as soon as it is approved.').waitFor();
    expect(await criticalViolations(owner)).toEqual([]);
    await screenshot(owner, 'settings-approvals.png');

    // Send back needs a comment: the browser refuses an empty one and nothing changes.
    await saleRow.getByRole('button', { name: 'Send back this post' }).click();
    expect((await postOf(sale)).status).toBe('pending_approval');
    await saleRow.getByLabel('Comment for the author').fill('Say which products are on sale.');
    await saleRow.getByRole('button', { name: 'Send back this post' }).click();
    await owner.getByText('Sent back to its author as a draft, with your comment.').waitFor();
    expect((await postOf(sale)).status).toBe('draft');

    await owner.locator(`li[data-post="${launch}"]`).getByRole('button', { name: 'Approve this post' }).click();
    await owner.getByText('Approved: scheduled for 1 account.').waitFor();
    const approved = await postOf(launch);
    expect({ status: approved.status, jobs: approved.jobs.length }).toEqual({ status: 'scheduled', jobs: 1 });
    await owner.getByTestId('none-waiting').waitFor();

    // The editor opens the draft that was sent back: the comment is there, and the button submits again.
    await ed.goto(`${t.baseUrl}/settings/posts/${sale}/edit`);
    const rejection = ed.getByTestId('rejection');
    await rejection.getByText('Say which products are on sale.').waitFor();
    expect(await rejection.textContent()).toContain('Sent back by key “HERALD_API_KEY”');
    expect(await ed.getByRole('button', { name: 'Submit for approval' }).count()).toBe(1);
  }, 120_000);
});
