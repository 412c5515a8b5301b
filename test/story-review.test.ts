import type { Browser, Page } from 'playwright-core';
import { wallTimeOf } from '../src/common/zoned-time';
import { bootPageApp, launchBrowser, newPage, PageApp } from './support/browser';
import { bearer } from './support/config';
import { connectBlueskyAccount, createWebhookAccount, waitForPost } from './support/engine';
import { drainMail, MailCatcher, mailConfig, mailedLinkTo, startMailCatcher } from './support/mail';
import { acceptInvitation, createFirstPerson, TEST_PASSWORD } from './support/people';
import { startPds, TestBskyAccount, TestPdsHandle } from './support/pds';
import { pollUntil } from './support/poll';
import { Receiver, startReceiver } from './support/receiver';

/**
 * The release's story, end to end ("done means" of the publishing release), with real parts: a
 * real Chromium, real SMTP (in-process), a loopback receiver for the blog webhook and the
 * development Bluesky PDS.
 *
 * An editor writes a post in the composer; the workspace needs an owner's approval for editors'
 * posts, so it waits, and the owner gets the mail. The owner makes a client review link and opens
 * it in a fresh browser context with no login, as the client would, and asks for changes with a
 * comment (the workspace lets a client's decision count): the post is back with the editor as a
 * draft. The editor edits it and submits it again; the owner approves; the post goes out at its
 * minute, to the blog and to Bluesky.
 *
 * The post's minute is its posting queue slot: the workspace's queue has a slot at that minute
 * and the editor presses "Add to queue"; the post holds the slot while it waits for approval,
 * gives it back when sent back to draft, and takes it again when added to the queue again.
 */
describe('the story: write, approve through a client review, publish', () => {
  let smtp: MailCatcher;
  let receiver: Receiver;
  let pds: TestPdsHandle;
  let author: TestBskyAccount;
  let t: PageApp;
  let browser: Browser;
  const ZONE = 'Europe/Paris';

  beforeAll(async () => {
    [smtp, receiver, pds] = await Promise.all([startMailCatcher(), startReceiver(), startPds()]);
    // Mail through the catcher; the page's own address stays the one the browser uses.
    const { publicUrl: _unused, ...mail } = mailConfig(smtp.url);
    t = await bootPageApp(mail, { engine: true });
    browser = await launchBrowser();
    author = await pds.createAccount('story');
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await Promise.all([smtp?.close(), receiver?.close(), pds?.close()]);
  });

  const api = () => t.http();
  const logInAs = async (page: Page, email: string) => {
    await page.goto(`${t.baseUrl}/settings/login`);
    await page.getByLabel('Email address').fill(email);
    await page.getByLabel('Password').fill(TEST_PASSWORD);
    await Promise.all([page.waitForURL((u) => !u.pathname.startsWith('/settings/login')), page.getByLabel('Password').press('Enter')]);
  };
  const postNamed = async (text: string) =>
    (
      (await api().get('/v1/posts?limit=100').set(bearer(t.adminKey)).expect(200)).body.data as {
        id: string;
        text: string;
        status: string;
      }[]
    ).find((p) => p.text.startsWith(text));
  const mailsTo = (to: string, subject: RegExp) => smtp.received.filter((m) => m.to.includes(to) && subject.test(m.parsed.subject ?? ''));

  it('goes from an editor through the owner and a client to the blog and Bluesky, in the minute chosen', async () => {
    // ---- the team: an owner and an editor (people, by mailed links), two accounts, approvals for editors with client approval
    await createFirstPerson(t, t.adminKey, 'olga@example.com', 'Olga Owner');
    await api().post('/v1/invitations').set(bearer(t.adminKey)).send({ email: 'eddie@example.com', role: 'editor' }).expect(201);
    await drainMail(t);
    await acceptInvitation(t, await mailedLinkTo(smtp, 'eddie@example.com'), 'Eddie Editor');
    await createWebhookAccount(t, t.adminKey, receiver.urlFor('/hook'), { name: 'Company blog' });
    await connectBlueskyAccount(t, t.adminKey, author, pds.url, 'Herald on Bluesky');
    await api().put('/v1/settings/approvals').set(bearer(t.adminKey)).send({ mode: 'editors', clientApproval: true }).expect(200);
    // The posting queue: one slot a week, at a minute about two minutes ahead.
    const at = new Date(Math.ceil((Date.now() + 100_000) / 60_000) * 60_000);
    const wall = wallTimeOf(at, ZONE);
    const day = new Intl.DateTimeFormat('en-GB', { timeZone: ZONE, weekday: 'short' }).format(at).toLowerCase().slice(0, 3);
    await api()
      .put('/v1/settings/queue')
      .set(bearer(t.adminKey))
      .send({ timezone: ZONE, slots: [{ day, time: wall.time }] })
      .expect(200);

    // ---- the editor writes the post in the composer and adds it to the queue
    const editor = await newPage(browser);
    await logInAs(editor.page, 'eddie@example.com');
    await editor.page.goto(`${t.baseUrl}/settings/compose?zone=${encodeURIComponent(ZONE)}`);
    await editor.page.getByLabel('Text', { exact: true }).fill('Winter sale: everything 20% off until Friday.');
    await editor.page.getByLabel(/Herald on Bluesky/).check();
    await editor.page.getByLabel(/Company blog/).check();
    await editor.page.getByRole('button', { name: 'Add to queue' }).click();
    await editor.page.waitForURL((u) => !u.pathname.startsWith('/settings/compose'));
    expect(await editor.page.getByRole('status').first().innerText()).toContain('holding the queue slot');
    const post = (await postNamed('Winter sale'))!;
    expect(post.status).toBe('pending_approval');
    const held = (await api().get(`/v1/posts/${post.id}`).set(bearer(t.adminKey)).expect(200)).body;
    expect(held.queueSlot?.at).toBe(at.toISOString());

    // ---- the owner is told by mail (real SMTP)
    await drainMail(t);
    const [waiting] = mailsTo('olga@example.com', /waits for your approval/);
    expect(waiting.parsed.text).toContain('Winter sale');
    expect(mailsTo('eddie@example.com', /waits for your approval/)).toEqual([]);

    // ---- the owner makes a client review link beside the post, and opens it as the client would: a fresh context, no login
    const owner = await newPage(browser);
    await logInAs(owner.page, 'olga@example.com');
    await owner.page.goto(`${t.baseUrl}/settings/posts/${post.id}/review`);
    await owner.page.getByRole('button', { name: 'Make a review link' }).click();
    const url = await owner.page.getByTestId('review-url').inputValue();
    const client = await newPage(browser);
    expect(await client.context.cookies()).toEqual([]);
    await client.page.goto(url);
    await client.page.getByTestId('waits').waitFor();
    const targets = await client.page.getByTestId('review-target').allInnerTexts();
    expect(targets.join('\n')).toContain('Bluesky');
    expect(targets.join('\n')).toContain(`@${author.handle}`);
    expect(targets.join('\n')).toContain('Winter sale: everything 20% off until Friday.');
    await client.page.getByLabel('Your name').fill('Clara Client');
    await client.page.getByLabel(/^Comment/).fill('The sale ends on Sunday now, please change it.');
    await client.page.getByRole('button', { name: 'Ask for changes' }).click();
    expect(await client.page.getByTestId('answered').innerText()).toContain('goes back to the team');
    const sentBack = (await api().get(`/v1/posts/${post.id}`).set(bearer(t.adminKey)).expect(200)).body;
    expect(sentBack).toMatchObject({ status: 'draft', scheduledAt: null, queueSlot: null });
    await drainMail(t);
    expect(
      mailsTo('eddie@example.com', /sent back/)
        .map((m) => m.parsed.text)
        .join('\n'),
    ).toContain('The sale ends on Sunday now');

    // ---- the editor reads the comment beside the post, edits it and submits it again (same minute)
    await editor.page.goto(`${t.baseUrl}/settings/posts/${post.id}/review`);
    expect(await editor.page.getByTestId('comment').last().innerText()).toMatch(/Clara Client[\s\S]*changes requested[\s\S]*Sunday/);
    await editor.page.goto(`${t.baseUrl}/settings/posts/${post.id}/edit?zone=${encodeURIComponent(ZONE)}`);
    // The composer shows why it came back.
    expect(await editor.page.getByTestId('rejection').innerText()).toContain('The sale ends on Sunday now');
    await editor.page.getByLabel('Text', { exact: true }).fill('Winter sale: everything 20% off until Sunday.');
    await editor.page.getByRole('button', { name: 'Add to queue' }).click();
    await editor.page.waitForURL((u) => !u.pathname.endsWith('/edit'));
    const resubmitted = (await api().get(`/v1/posts/${post.id}`).set(bearer(t.adminKey)).expect(200)).body;
    expect(resubmitted).toMatchObject({
      status: 'pending_approval',
      text: 'Winter sale: everything 20% off until Sunday.',
      scheduledAt: at.toISOString(),
      queueSlot: expect.objectContaining({ at: at.toISOString() }),
    });

    // ---- the owner approves on the page (before the minute): the post is scheduled for it
    await drainMail(t);
    expect(mailsTo('olga@example.com', /waits for your approval/)).toHaveLength(2);
    await owner.page.goto(`${t.baseUrl}/settings/approvals`);
    await owner.page.getByRole('button', { name: 'Approve this post' }).click();
    await owner.page.waitForLoadState();
    expect(Date.now()).toBeLessThan(at.getTime());
    const approved = await pollUntil(
      'the approval to be written',
      async () => (await api().get(`/v1/posts/${post.id}`).set(bearer(t.adminKey)).expect(200)).body,
      (p) => p.status !== 'pending_approval',
      10_000,
    );
    expect(approved).toMatchObject({ status: 'scheduled', scheduledAt: at.toISOString() });
    expect(approved.jobs).toHaveLength(2);

    // ---- it goes out in that minute: the blog's receiver and the Bluesky PDS get it
    const [hook] = await receiver.waitFor(1, at.getTime() + 60_000 - Date.now() + 30_000);
    const records = await pollUntil(
      'the post to reach the PDS',
      async () =>
        (await pds.network.pds.getAgent().com.atproto.repo.listRecords({ repo: author.did, collection: 'app.bsky.feed.post' })).data
          .records,
      (r) => r.length > 0,
      Math.max(30_000, at.getTime() + 60_000 - Date.now()),
      200,
    );
    expect(JSON.parse(hook.body).data.text).toBe('Winter sale: everything 20% off until Sunday.');
    expect((records[0].value as { text: string; createdAt: string }).text).toBe('Winter sale: everything 20% off until Sunday.');
    expect(hook.receivedAt.getTime()).toBeGreaterThanOrEqual(at.getTime());
    expect(hook.receivedAt.getTime()).toBeLessThan(at.getTime() + 60_000);
    // The receivers have it as soon as the requests arrive; Herald records each success after the
    // answer, so the post may still read "publishing" for a moment.
    const done = await waitForPost(t, t.adminKey, post.id, (p) => p.status !== 'publishing');
    expect(done.status).toBe('published');
    for (const job of done.jobs as { id: string }[]) {
      const detail = (await api().get(`/v1/jobs/${job.id}`).set(bearer(t.adminKey)).expect(200)).body;
      const started = new Date(detail.attempts[0].startedAt).getTime();
      expect(started).toBeGreaterThanOrEqual(at.getTime());
      expect(started).toBeLessThan(at.getTime() + 60_000);
    }
    // Nothing of the first version went anywhere.
    expect(receiver.requests.some((r) => r.body.includes('until Friday'))).toBe(false);
    await Promise.all([editor.context.close(), owner.context.close(), client.context.close()]);
  }, 300_000);
});
