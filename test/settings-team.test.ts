import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { bootPageApp, criticalViolations, launchBrowser, newPage, PageApp, screenshot } from './support/browser';
import { killJobs } from './support/dlq';
import { createPost, createWebhookAccount } from './support/engine';
import { MailCatcher, startMailCatcher } from './support/mail';
import { Receiver, startReceiver } from './support/receiver';
import { bearer } from './support/config';

/**
 * The team story in a real Chromium (issue 18), with the worker running, a real SMTP server and
 * a loopback receiver: the owner (the first person, made with the operator's key, a login once
 * the mailed link confirmed the address) invites an editor and a viewer, whose links come by mail; both set passwords and log in; the editor fixes
 * a failed post and requeues it, and the receiver gets the fixed text; the viewer reads the
 * failed posts with no button to change them, and a form sent anyway is refused; the owner
 * removes the editor, whose open page then goes to the login; the activity names who did what.
 */
jest.setTimeout(180_000);

describe('settings page: a team, in a browser', () => {
  let browser: Browser;
  let t: PageApp;
  let smtp: MailCatcher;
  let receiver: Receiver;
  const contexts: BrowserContext[] = [];
  let blog: string;
  let fixMe: string;
  let leaveMe: string;

  beforeAll(async () => {
    [browser, smtp, receiver] = await Promise.all([launchBrowser(), startMailCatcher(), startReceiver(() => 200)]);
    t = await bootPageApp(
      {
        smtpUrl: smtp.url,
        mailFrom: 'Herald <herald@example.com>',
        notifications: { enabled: true, pollIntervalMs: 200, sweepIntervalSeconds: 60 },
      },
      { engine: true },
    );
    blog = (await createWebhookAccount(t, t.adminKey, receiver.urlFor('/hook'))).id;
    await t.http().patch(`/v1/accounts/${blog}`).set(bearer(t.adminKey)).send({ name: 'Company blog' }).expect(200);
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const dead = async (text: string) => {
      const post = await createPost(t, t.adminKey, { text, targets: [{ accountId: blog }], scheduledAt: later });
      await killJobs(t.databaseUrl, [post.jobs[0].id], { lastError: 'HTTP 400: the receiver rejected the payload' });
      return post.jobs[0].id;
    };
    fixMe = await dead('Our new relase is out');
    leaveMe = await dead('A post the viewer only reads');
  });
  afterAll(async () => {
    for (const c of contexts) await c.close();
    await browser?.close();
    await t?.close();
    await Promise.all([smtp?.close(), receiver?.close()]);
  });

  const visible = (l: Locator) => l.first().waitFor({ state: 'visible', timeout: 15_000 });
  async function open(): Promise<Page> {
    const { context, page } = await newPage(browser);
    contexts.push(context);
    // A step that cannot happen fails with what it waited for, not with the test's timeout.
    page.setDefaultTimeout(20_000);
    return page;
  }
  async function submit(page: Page, button: Locator, urlWanted?: (url: URL) => boolean): Promise<void> {
    await Promise.all([page.waitForURL(urlWanted ?? (() => true), { waitUntil: 'load' }), button.click()]);
  }
  async function logInAs(page: Page, email: string, password: string): Promise<void> {
    await page.goto(`${t.baseUrl}/settings/login`);
    await page.getByLabel('Email address').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await submit(page, page.getByRole('button', { name: 'Log in', exact: true }), (u) => !u.pathname.startsWith('/settings/login'));
  }
  async function linkFromMail(n: number, to: string): Promise<string> {
    const mails = await smtp.waitFor(n, 30_000);
    const mail = mails.find((m) => m.to.includes(to));
    if (!mail) throw new Error(`no mail to ${to}`);
    const link = /https?:\/\/\S+token=[A-Za-z0-9_-]{43}/.exec(mail.parsed.text ?? '')?.[0];
    if (!link) throw new Error(`no link in the mail to ${to}: ${mail.parsed.text}`);
    return link;
  }
  async function accept(link: string, name: string, password: string): Promise<Page> {
    const page = await open();
    await page.goto(link);
    await visible(page.getByRole('heading', { name: /^Join/ }));
    expect(await criticalViolations(page)).toEqual([]);
    await page.getByLabel('Your name').fill(name);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByLabel('The password again').fill(password);
    await submit(page, page.getByRole('button', { name: 'Join' }), (u) => u.pathname === '/settings/accounts');
    await visible(page.getByText('Welcome to'));
    return page;
  }

  let owner: Page;
  let editor: Page;
  let viewer: Page;
  const ownerPassword = 'owner password, long enough';
  const editorPassword = 'editor password, long enough';
  const viewerPassword = 'viewer password, long enough';

  it('the operator creates the first person, who confirms the address by the mailed link; the owner logs in with a password and invites an editor and a viewer by mail', async () => {
    owner = await open();
    await owner.goto(`${t.baseUrl}/settings/login`);
    await owner.getByLabel('API key').fill(t.adminKey);
    await submit(owner, owner.getByRole('button', { name: 'Log in with the key' }), (u) => !u.pathname.startsWith('/settings/login'));
    await owner.getByRole('link', { name: 'Team' }).click();
    await visible(owner.getByRole('heading', { name: 'No people yet' }));
    await owner.getByLabel('Email address').fill('olga@example.com');
    await owner.getByLabel('Name').fill('Olga Owner');
    await owner.getByLabel('Password', { exact: true }).fill(ownerPassword);
    await owner.getByLabel('The password again').fill(ownerPassword);
    await submit(owner, owner.getByRole('button', { name: 'Create the first person' }));
    // A mail server is configured: the address becomes a login once its mailbox has the link.
    await visible(owner.getByText('A confirmation link is on its way to olga@example.com'));
    await visible(owner.getByText('olga@example.com · owner'));
    await submit(owner, owner.getByRole('button', { name: 'Log out' }), (u) => u.pathname === '/settings/login');
    await owner.goto(await linkFromMail(1, 'olga@example.com'));
    await visible(owner.getByRole('heading', { name: 'Confirm your address' }));
    expect(await criticalViolations(owner)).toEqual([]);
    await submit(owner, owner.getByRole('button', { name: 'Confirm' }), (u) => u.pathname === '/settings/accounts');
    await visible(owner.getByText('Your address is confirmed'));
    await submit(owner, owner.getByRole('button', { name: 'Log out' }), (u) => u.pathname === '/settings/login');

    await logInAs(owner, 'olga@example.com', ownerPassword);
    await visible(owner.getByTestId('me').filter({ hasText: 'Olga Owner' }));
    await owner.getByRole('link', { name: 'Team' }).click();
    for (const [email, role] of [
      ['eddie@example.com', 'Editor'],
      ['vera@example.com', 'Viewer'],
    ]) {
      await owner.getByLabel('Email address').fill(email);
      await owner.getByLabel('Role', { exact: true }).selectOption({ value: role.toLowerCase() });
      await submit(owner, owner.getByRole('button', { name: 'Invite' }));
      await visible(owner.getByText(`${email} is invited as ${role.toLowerCase()}`));
    }
    expect(await criticalViolations(owner)).toEqual([]);
    await screenshot(owner, 'settings-team.png');
  });

  it('the editor and the viewer open their mailed links, set passwords and log in', async () => {
    editor = await accept(await linkFromMail(3, 'eddie@example.com'), 'Eddie Editor', editorPassword);
    viewer = await accept(await linkFromMail(3, 'vera@example.com'), 'Vera Viewer', viewerPassword);
    // And log in again, as they will from now on.
    await submit(viewer, viewer.getByRole('button', { name: 'Log out' }), (u) => u.pathname === '/settings/login');
    await logInAs(viewer, 'vera@example.com', viewerPassword);
    await visible(viewer.getByTestId('me').filter({ hasText: 'Vera Viewer' }));
    await submit(editor, editor.getByRole('button', { name: 'Log out' }), (u) => u.pathname === '/settings/login');
    await logInAs(editor, 'eddie@example.com', editorPassword);
    await visible(editor.getByTestId('me').filter({ hasText: 'editor' }));
  });

  it('the editor fixes the failed post and requeues it: the receiver gets the fixed text', async () => {
    await editor.goto(`${t.baseUrl}/settings/failed-posts`);
    await editor.getByRole('link', { name: 'Our new relase is out' }).click();
    await editor.waitForURL(`${t.baseUrl}/settings/failed-posts/${fixMe}`);
    await editor.getByLabel('Text').fill('Our new release is out');
    await submit(editor, editor.getByRole('button', { name: 'Save and requeue' }));
    await visible(editor.getByText('Saved. Requeued: it is going out now.'));
    const delivered = await receiver.waitFor(1, 30_000);
    expect(delivered.map((r) => JSON.parse(r.body).data.text)).toContain('Our new release is out');
  });

  it('the viewer sees it, and every change button is absent; a form sent anyway is refused and changes nothing', async () => {
    await viewer.goto(`${t.baseUrl}/settings/failed-posts/${fixMe}`);
    await visible(viewer.getByText('Our new release is out'));
    await visible(viewer.getByText(/edit by Eddie Editor/));
    await viewer.goto(`${t.baseUrl}/settings/failed-posts`);
    await visible(viewer.getByRole('link', { name: 'A post the viewer only reads' }));
    for (const name of ['Requeue selected', 'Discard selected', 'Requeue all that match', 'Discard all that match']) {
      expect(await viewer.getByRole('button', { name }).count()).toBe(0);
    }
    await viewer.goto(`${t.baseUrl}/settings/failed-posts/${leaveMe}`);
    await visible(viewer.locator('#read-only'));
    for (const name of ['Save and requeue', 'Save', 'Requeue as it is', 'Discard']) {
      expect(await viewer.getByRole('button', { name, exact: true }).count()).toBe(0);
    }
    await viewer.goto(`${t.baseUrl}/settings/accounts`);
    await visible(viewer.getByRole('heading', { name: 'Company blog' }));
    for (const name of [/^Check/, /^Disable/, /^Connect/]) expect(await viewer.getByRole('button', { name }).count()).toBe(0);
    expect(await viewer.getByRole('link', { name: /^(Reconnect|Remove|Connect)/ }).count()).toBe(0);
    expect(await criticalViolations(viewer)).toEqual([]);

    // The discard form, sent from the viewer's own page with its session's token: refused.
    const csrf = await viewer.locator('input[name="_csrf"]').first().inputValue();
    const forged = await viewer.request.post(`${t.baseUrl}/settings/failed-posts/${leaveMe}/discard`, {
      form: { _csrf: csrf },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);
    expect(await forged.text()).toContain('Nothing was changed');
    const still = await t.http().get(`/v1/dlq/${leaveMe}`).set(bearer(t.adminKey)).expect(200);
    expect(still.body.status).toBe('dead');
  });

  it('the owner removes the editor, whose open page then goes to the login; the activity says who did what', async () => {
    await editor.goto(`${t.baseUrl}/settings/posts`);
    await owner.goto(`${t.baseUrl}/settings/team`);
    await owner.getByRole('link', { name: 'Remove Eddie Editor' }).click();
    await submit(owner, owner.getByRole('button', { name: 'Remove Eddie Editor' }));
    await visible(owner.getByText('Removed: they can no longer log in'));
    // The editor's next click, on the page they had open.
    await submit(editor, editor.getByRole('link', { name: 'Failed posts' }), (u) => u.pathname === '/settings/login');
    await visible(editor.getByLabel('Email address'));

    await owner.getByRole('link', { name: 'Activity' }).click();
    await visible(owner.getByText('Edited a failed post'));
    const rows = owner.locator('.row');
    const edited = rows.filter({ hasText: 'Edited a failed post' });
    await visible(edited.getByText('Eddie Editor <eddie@example.com>'));
    await visible(rows.filter({ hasText: 'Removed Eddie Editor' }).getByText('Olga Owner <olga@example.com>'));
    expect(await criticalViolations(owner)).toEqual([]);
  });
});
