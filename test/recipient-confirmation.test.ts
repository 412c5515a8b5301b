import request from 'supertest';
import { Client } from 'pg';
import { bootTestApp, TestApp } from './support/app';
import { insertAccount } from './support/dlq';
import { drainMail, MailCatcher, mailConfig, newWorkspace, preconfirmRecipients, startMailCatcher, tick, Workspace } from './support/mail';
import { csrfOf, loggedInAgent } from './support/settings-http';
import { bearer } from './support/config';

/**
 * Mail that cannot be abused (docs/notifications.md, "Who gets mail"): a recipient gets nothing
 * until they confirm their address through a mailed link, confirmation mails are limited, and
 * alerts are capped per account and per workspace per day.
 *
 * The spam relay this closes: a key set 20 recipients nobody confirmed, and an account was
 * flipped to needs_reauth and back (a webhook answering 401, then a PATCH) in a loop: every round
 * mailed every address, from the operator's MAIL_FROM.
 */
describe('recipients confirm before they get mail; alerts are capped', () => {
  let smtp: MailCatcher;
  let t: TestApp;
  let db: Client;

  beforeAll(async () => {
    smtp = await startMailCatcher();
    // An http PUBLIC_URL: supertest speaks plain http, and the page's cookies are Secure under an https one.
    t = await bootTestApp({ config: mailConfig(smtp.url, { publicUrl: 'http://herald.example.com' }) });
    db = new Client({ connectionString: t.databaseUrl });
    await db.connect();
  });
  afterAll(async () => {
    await db.end();
    await t.close();
    await smtp.close();
  });
  beforeEach(() => smtp.received.splice(0));

  /** The notifier's pass at this moment (confirmations, alerts), then every mail due is sent. */
  const deliver = async () => {
    await tick(t, new Date());
    await drainMail(t);
  };
  const put = (ws: Workspace, body: Record<string, unknown>) => t.http().put('/v1/settings/notifications').set(bearer(ws.key)).send(body);
  const settings = async (ws: Workspace) => (await t.http().get('/v1/settings/notifications').set(bearer(ws.key)).expect(200)).body;
  const outcomes = async (accountId: string) =>
    (await db.query<{ outcome: string }>(`SELECT outcome FROM account_events WHERE account_id = $1 ORDER BY id`, [accountId])).rows.map(
      (r) => r.outcome,
    );
  /** An incident and its fix: the account needs re-authentication, then a person sets it active again (PATCH). */
  const incident = async (ws: Workspace, accountId: string) => {
    await db.query(`UPDATE accounts SET status = 'needs_reauth', status_reason = 'HTTP 401' WHERE id = $1`, [accountId]);
    await deliver();
    await t.http().patch(`/v1/accounts/${accountId}`).set(bearer(ws.key)).send({ status: 'active' }).expect(200);
  };

  it('mails 20 unconfirmed recipients one confirmation each and nothing else, however often an account fails and is patched back', async () => {
    const ws = await newWorkspace(t, 'Relay');
    const strangers = Array.from({ length: 20 }, (_, i) => `stranger${i}@example.org`);
    await put(ws, { digest: { recipients: strangers } }).expect(200);
    const account = await insertAccount(t.databaseUrl, ws.id, 'webhook', 'Blog');
    for (let round = 0; round < 5; round++) await incident(ws, account);
    await deliver();

    // One confirmation per address, and not one alert (before: 5 × 20 alert mails).
    expect(smtp.received).toHaveLength(20);
    expect(smtp.received.map((m) => m.to[0]).sort()).toEqual([...strangers].sort());
    for (const m of smtp.received) {
      expect(m.parsed.subject).toBe('Confirm Herald notifications for Relay');
      expect(m.parsed.text).toContain('ignore this mail: you will get nothing more');
    }
    expect(await outcomes(account)).toEqual(Array(5).fill('no_recipients'));
    expect((await settings(ws)).recipientStatus.map((r: { status: string }) => r.status)).toEqual(Array(20).fill('pending'));

    // Saving the list again, or taking the addresses off and putting them back, mails no new link
    // the same day; 20 other addresses get none either (20 confirmation mails a day per workspace).
    await put(ws, { digest: { recipients: strangers } }).expect(200);
    await put(ws, { digest: { recipients: [] } }).expect(200);
    await put(ws, { digest: { recipients: strangers } }).expect(200);
    const others = strangers.map((a) => a.replace('stranger', 'other'));
    await put(ws, { digest: { recipients: others } }).expect(200);
    await deliver();
    expect(smtp.received).toHaveLength(20);
    const after = await settings(ws);
    expect(after.recipientStatus.map((r: { status: string }) => r.status)).toEqual(Array(20).fill('waiting'));
  });

  it('confirms an address through the mailed link (a page with a button, once), and only then mails it alerts', async () => {
    const ws = await newWorkspace(t, 'Acme');
    const saved = await put(ws, { digest: { recipients: ['ann@example.com'] } }).expect(200);
    expect(saved.body.recipientStatus).toEqual([
      { address: 'ann@example.com', status: 'pending', confirmationSentAt: expect.any(String), linkExpiresAt: expect.any(String) },
    ]);
    await deliver();
    expect(smtp.received).toHaveLength(1);
    const link = /http:\/\/herald\.example\.com(\/settings\/confirm-recipient\?token=[A-Za-z0-9_-]{43})/.exec(
      smtp.received[0].parsed.text ?? '',
    );
    expect(link).not.toBeNull();
    const path = link![1];

    // The page shows who is pending.
    const owner = await loggedInAgent(t, ws.key);
    const page = await owner.agent.get('/settings/notifications').expect(200);
    expect(page.text).toMatch(/<li data-status="pending"><strong>ann@example.com<\/strong>: waiting for confirmation/);

    // Opening the link (as a mail scanner would) confirms nothing.
    const browser = request.agent(t.app.getHttpServer());
    const form = await browser.get(path).expect(200);
    expect(form.text).toContain('<strong>ann@example.com</strong> to the recipients');
    expect(form.text).toContain('“Acme”');
    expect((await settings(ws)).recipientStatus[0].status).toBe('pending');

    const token = new URL(path, 'https://x').searchParams.get('token')!;
    const done = await browser
      .post('/settings/confirm-recipient')
      .type('form')
      .send({ _csrf: csrfOf(form.text), token })
      .expect(200);
    expect(done.text).toContain('Notifications confirmed');
    expect((await settings(ws)).recipientStatus[0].status).toBe('confirmed');
    expect((await owner.agent.get('/settings/notifications').expect(200)).text).toMatch(
      /<li data-status="confirmed"><strong>ann@example.com<\/strong>: confirmed/,
    );

    // Single use.
    const again = await browser.get(path).expect(410);
    expect(again.text).toContain('This link does not work (any more)');

    const account = await insertAccount(t.databaseUrl, ws.id, 'webhook', 'Blog');
    await db.query(`UPDATE accounts SET status = 'needs_reauth', status_reason = 'HTTP 401' WHERE id = $1`, [account]);
    await deliver();
    expect(smtp.received.map((m) => [m.to, m.parsed.subject])).toEqual([
      [['ann@example.com'], 'Confirm Herald notifications for Acme'],
      [['ann@example.com'], 'Herald: "Blog" (webhook) needs to be reconnected'],
    ]);
  });

  it('refuses a link that expired, or whose address was taken off the list, and one posted without the form token', async () => {
    const ws = await newWorkspace(t, 'Links');
    await put(ws, { digest: { recipients: ['bo@example.com', 'cy@example.com'] } }).expect(200);
    await deliver();
    const linkOf = (to: string) =>
      /\/settings\/confirm-recipient\?token=([A-Za-z0-9_-]{43})/.exec(smtp.received.find((m) => m.to[0] === to)!.parsed.text ?? '')![1];
    const bo = linkOf('bo@example.com');
    const cy = linkOf('cy@example.com');

    const browser = request.agent(t.app.getHttpServer());
    const form = await browser.get(`/settings/confirm-recipient?token=${bo}`).expect(200);
    // Without the form's own cookie (posted from elsewhere): refused, nothing confirmed.
    await request(t.app.getHttpServer())
      .post('/settings/confirm-recipient')
      .type('form')
      .send({ _csrf: csrfOf(form.text), token: bo })
      .expect(403);

    await db.query(`UPDATE notification_recipients SET token_expires_at = now() - interval '1 second' WHERE address = 'bo@example.com'`);
    await browser
      .post('/settings/confirm-recipient')
      .type('form')
      .send({ _csrf: csrfOf(form.text), token: bo })
      .expect(410);

    await put(ws, { digest: { recipients: ['bo@example.com'] } }).expect(200);
    await browser.get(`/settings/confirm-recipient?token=${cy}`).expect(410);
    expect((await settings(ws)).recipientStatus.map((r: { status: string }) => r.status)).toEqual(['waiting']);
  });

  it(`mails at most 4 alerts per account a day; the rest are recorded as held and the page says so`, async () => {
    const ws = await newWorkspace(t, 'Capped');
    await preconfirmRecipients(t.databaseUrl, ws.key, ['oncall@example.com']);
    await put(ws, { digest: { recipients: ['oncall@example.com'] } }).expect(200);
    const account = await insertAccount(t.databaseUrl, ws.id, 'webhook', 'Flaky blog');
    for (let round = 0; round < 6; round++) await incident(ws, account);

    expect(smtp.received).toHaveLength(4);
    expect(await outcomes(account)).toEqual(['queued', 'queued', 'queued', 'queued', 'capped_account', 'capped_account']);
    const limits = (await settings(ws)).alertLimits;
    expect(limits).toEqual({
      perAccountPerDay: 4,
      perWorkspacePerDay: 20,
      heldLastDay: [{ accountId: account, accountName: 'Flaky blog', reached: 'account', count: 2, lastAt: expect.any(String) }],
    });
    const owner = await loggedInAgent(t, ws.key);
    const page = (await owner.agent.get('/settings/notifications').expect(200)).text;
    expect(page).toContain('A daily alert limit was reached.');
    expect(page).toMatch(/Flaky blog: 2 \(the per-account limit; last at/);
  });

  it('mails at most 20 alerts per workspace a day, across its accounts', async () => {
    const ws = await newWorkspace(t, 'Many accounts');
    await preconfirmRecipients(t.databaseUrl, ws.key, ['oncall@example.com']);
    await put(ws, { digest: { recipients: ['oncall@example.com'] } }).expect(200);
    const accounts = [];
    for (let i = 0; i < 6; i++) accounts.push(await insertAccount(t.databaseUrl, ws.id, 'webhook', `Blog ${i}`));
    // 6 accounts × 4 incidents = 24 alerts wanted; each account stays within its own limit.
    for (let round = 0; round < 4; round++) {
      await db.query(`UPDATE accounts SET status = 'needs_reauth' WHERE id = ANY($1::uuid[])`, [accounts]);
      await deliver();
      await db.query(`UPDATE accounts SET status = 'active' WHERE id = ANY($1::uuid[])`, [accounts]);
    }
    expect(smtp.received).toHaveLength(20);
    const all = (await Promise.all(accounts.map(outcomes))).flat();
    expect(all.filter((o) => o === 'queued')).toHaveLength(20);
    expect(all.filter((o) => o === 'capped_workspace')).toHaveLength(4);
  });
});
