import { Client } from 'pg';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { dataSourceOptions, runMigrations } from '../src/database/data-source';
import { hashLinkToken } from '../src/people/link-tokens';
import { bootTestApp, TestApp } from './support/app';
import { createTestDatabase, undoMigrationsThrough, withClient } from './support/database';
import { drainMail, MailCatcher, mailConfig, newWorkspace, startMailCatcher, tick, Workspace } from './support/mail';
import { acceptInvitation, confirmFirstPerson, createFirstPerson, personAgent } from './support/people';
import { pollUntil } from './support/poll';
import { csrfOf } from './support/settings-http';
import { bearer } from './support/config';

/**
 * One-use links are not kept at rest (issue 28, defect 2): invitation, password-reset and
 * recipient-confirmation links were kept in cleartext in mail_outbox bodies forever, so a copy of
 * the database (a backup, a replica, a read-only role) opened them. Here every kind of link mail
 * goes out through a real SMTP server; every table of the database is dumped while the mail waits
 * and after it was sent, and the token the recipient got is in neither dump. The link still opens
 * its page.
 */

const PUBLIC_URL = 'http://herald.example.com';
const LINK = /http:\/\/herald\.example\.com\/settings\/(invitation|reset-password|confirm-recipient)\?token=([A-Za-z0-9_-]{43})/;
/** What an operator reading mail_outbox finds of a link mail once it was sent or failed for good. */
const REMOVED = '(removed once sent: it held a one-use link)';
/** Any one-use link of Herald's, whatever its token: none may sit in the database. */
const ANY_LINK = /\/settings\/(invitation|reset-password|confirm-recipient)\?token=/;

/** Every row of every table of the database (all schemas but PostgreSQL's own), as JSON text. */
async function dumpDatabase(url: string): Promise<string> {
  return withClient(url, async (c) => {
    const tables = (
      await c.query<{ name: string }>(
        `SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables
         WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`,
      )
    ).rows.map((r) => r.name);
    expect(tables).toContain('public.mail_outbox');
    const parts: string[] = [];
    for (const name of tables) {
      const rows = (await c.query<{ r: string }>(`SELECT row_to_json(t)::text AS r FROM ${name} t`)).rows;
      parts.push(`${name}:\n${rows.map((r) => r.r).join('\n')}`);
    }
    return parts.join('\n');
  });
}

/** The last mail to `to` among those received, its link and token. */
function linkIn(smtp: MailCatcher, to: string): { url: string; kind: string; token: string } {
  const mail = [...smtp.received].reverse().find((m) => m.to.includes(to));
  if (!mail) throw new Error(`no mail to ${to}; got mail to ${smtp.received.map((m) => m.to.join(',')).join('; ')}`);
  const m = LINK.exec(mail.parsed.text ?? '');
  if (!m) throw new Error(`no link in the mail to ${to}: ${mail.parsed.text}`);
  // The HTML part carries the same link.
  expect(String(mail.parsed.html)).toContain(m[2]);
  return { url: m[0], kind: m[1], token: m[2] };
}

describe('one-use links are not kept at rest', () => {
  let smtp: MailCatcher;
  let t: TestApp;
  let ws: Workspace;
  let ownerId: string;

  beforeAll(async () => {
    smtp = await startMailCatcher();
    // An http PUBLIC_URL: supertest speaks plain http, and the page's cookies are Secure under an https one.
    t = await bootTestApp({ config: mailConfig(smtp.url, { publicUrl: PUBLIC_URL }) });
    ws = await newWorkspace(t, 'Vault');
    ownerId = await createFirstPerson(t, ws.key, 'olga@example.test', 'Olga Owner');
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  const pendingKinds = () =>
    withClient(t.databaseUrl, async (c) =>
      (await c.query<{ kind: string }>(`SELECT kind FROM mail_outbox WHERE status = 'pending' ORDER BY kind`)).rows.map((r) => r.kind),
    );

  /**
   * The heart of each case: with the link mail written and waiting, the database is dumped; the
   * mail is then sent and received; the token in it is in neither dump, nor is any link.
   */
  async function sendAndCheck(kind: string, to: string): Promise<{ url: string; token: string }> {
    expect(await pendingKinds()).toEqual([kind]);
    const whilePending = await dumpDatabase(t.databaseUrl);
    const before = smtp.received.length;
    await drainMail(t);
    await smtp.waitFor(before + 1);
    const link = linkIn(smtp, to);
    expect(link.kind).toBe(
      { invitation: 'invitation', password_reset: 'reset-password', recipient_confirmation: 'confirm-recipient' }[kind],
    );
    const afterSending = await dumpDatabase(t.databaseUrl);
    for (const [when, dump] of [
      ['while the mail waited', whilePending],
      ['once it was sent', afterSending],
    ] as const) {
      expect({ when, token: dump.includes(link.token) }).toEqual({ when, token: false });
      expect({ when, url: dump.includes(link.url) }).toEqual({ when, url: false });
      expect({ when, link: ANY_LINK.exec(dump)?.[0] ?? null }).toEqual({ when, link: null });
    }
    // The outcome is still recorded on the row; the body is gone, not merely sealed (a copy of
    // the database together with HERALD_SECRET_KEY opens nothing either).
    const rows = await withClient(
      t.databaseUrl,
      async (c) => (await c.query(`SELECT status, html, text FROM mail_outbox WHERE kind = $1 AND $2 = ANY(recipients)`, [kind, to])).rows,
    );
    expect(rows).toEqual([{ status: 'sent', html: REMOVED, text: REMOVED }]);
    return link;
  }

  it("keeps no token of a first person's confirmation; the mailed link makes the person", async () => {
    const other = await newWorkspace(t, 'Second vault');
    const res = await t
      .http()
      .post('/v1/people')
      .set(bearer(other.key))
      .send({ email: 'fay@example.test', name: 'Fay Owner', password: 'a long enough password' })
      .expect(202);
    expect(res.body).toMatchObject({ mailed: true, link: null });
    const link = await sendAndCheck('invitation', 'fay@example.test');
    await confirmFirstPerson(t, link.url);
    await personAgent(t, 'fay@example.test', 'a long enough password');
  });

  it('keeps no invitation token: not while the mail waits, not once it was sent; the mailed link still lets the person join', async () => {
    const res = await t.http().post('/v1/invitations').set(bearer(ws.key)).send({ email: 'ivy@example.test', role: 'editor' }).expect(201);
    expect(res.body).toMatchObject({ mailed: true, link: null });
    const link = await sendAndCheck('invitation', 'ivy@example.test');
    const agent = await acceptInvitation(t, link.url, 'Ivy Editor');
    expect((await agent.get('/settings/accounts')).text).toContain('Ivy Editor');
  });

  it('keeps no token of a reset an owner sends; the mailed link opens the new-password form', async () => {
    await t.http().post(`/v1/people/${ownerId}/password-reset`).set(bearer(ws.key)).expect(200, { mailed: true });
    const link = await sendAndCheck('password_reset', 'olga@example.test');
    const u = new URL(link.url);
    const form = await request(t.app.getHttpServer()).get(u.pathname + u.search);
    expect(form.status).toBe(200);
    expect(form.text).toContain('olga@example.test');
  });

  it('keeps no token of a reset asked for with "Forgot your password?"; the mailed link sets a new password', async () => {
    await withClient(t.databaseUrl, (c) => c.query(`DELETE FROM mail_outbox`));
    const browser = request.agent(t.app.getHttpServer());
    const form = await browser.get('/settings/forgot-password').expect(200);
    await browser
      .post('/settings/forgot-password')
      .type('form')
      .send({ _csrf: csrfOf(form.text), email: 'ivy@example.test' })
      .expect(200);
    // The page answers first and writes the link after (the same time for any address).
    await pollUntil('the reset mail written', pendingKinds, (kinds) => kinds.length > 0);
    const link = await sendAndCheck('password_reset', 'ivy@example.test');
    const u = new URL(link.url);
    const page = await browser.get(u.pathname + u.search).expect(200);
    const fresh = 'another long enough password';
    await browser
      .post('/settings/reset-password')
      .type('form')
      .send({ _csrf: csrfOf(page.text), token: link.token, password: fresh, confirm: fresh })
      .expect(303);
    await personAgent(t, 'ivy@example.test', fresh);
  });

  it('keeps no token of a recipient confirmation; the mailed link confirms the address', async () => {
    await withClient(t.databaseUrl, (c) => c.query(`DELETE FROM mail_outbox`));
    await t
      .http()
      .put('/v1/settings/notifications')
      .set(bearer(ws.key))
      .send({ digest: { recipients: ['rita@example.org'] } })
      .expect(200);
    // Saving the list wrote the confirmation mail.
    const link = await sendAndCheck('recipient_confirmation', 'rita@example.org');
    const u = new URL(link.url);
    const browser = request.agent(t.app.getHttpServer());
    const form = await browser.get(u.pathname + u.search).expect(200);
    expect(form.text).toContain('<strong>rita@example.org</strong>');
    const done = await browser
      .post('/settings/confirm-recipient')
      .type('form')
      .send({ _csrf: csrfOf(form.text), token: link.token })
      .expect(200);
    expect(done.text).toContain('Notifications confirmed');
  });

  it('keeps no link of a mail the server refused for good', async () => {
    await withClient(t.databaseUrl, (c) => c.query(`DELETE FROM mail_outbox`));
    smtp.refuseNext(1, 550, 'No such user here');
    await t.http().post('/v1/invitations').set(bearer(ws.key)).send({ email: 'nobody@example.test', role: 'viewer' }).expect(201);
    await drainMail(t);
    const rows = await withClient(
      t.databaseUrl,
      async (c) => (await c.query(`SELECT status, last_error, html, text FROM mail_outbox WHERE kind = 'invitation'`)).rows,
    );
    expect(rows).toEqual([{ status: 'failed', last_error: expect.stringContaining('No such user here'), html: REMOVED, text: REMOVED }]);
    expect(ANY_LINK.exec(await dumpDatabase(t.databaseUrl))?.[0] ?? null).toBeNull();
  });
});

/**
 * The upgrade: a database of the version before holds link mails in cleartext, sent ones and
 * waiting ones. After the migration none is left: sent and failed ones lose their bodies, waiting
 * ones are withdrawn (they cannot be sealed without the key) and a recipient whose confirmation
 * was withdrawn gets a fresh link at the next pass.
 */
describe('the sealed-mail migration', () => {
  const MIGRATION = 'SealedMail1765800000000';

  it('drops the links the version before left in mail_outbox, and a withdrawn confirmation goes out again', async () => {
    const { url } = await createTestDatabase();
    const ds = new DataSource(dataSourceOptions(url));
    await ds.initialize();
    let workspaceId: string;
    const tokens = { sent: 'S'.repeat(43), waiting: 'W'.repeat(43), confirm: 'C'.repeat(43) };
    try {
      expect(ds.migrations.map((m) => m.name)).toContain(MIGRATION);
      await undoMigrationsThrough(ds, MIGRATION);
      workspaceId = await withClient(url, async (c: Client) => {
        const ws = await c.query<{ id: string }>(`INSERT INTO workspaces (name) VALUES ('Before') RETURNING id`);
        const id = ws.rows[0].id;
        const mail = (kind: string, to: string, token: string, status: string) =>
          c.query(
            `INSERT INTO mail_outbox (workspace_id, kind, recipients, subject, html, text, status, sent_at)
             VALUES ($1, $2, ARRAY[$3], 'A link', $4, $4, $5, CASE WHEN $5 = 'sent' THEN now() END)`,
            [id, kind, to, `Open ${PUBLIC_URL}/settings/invitation?token=${token}`, status],
          );
        await mail('invitation', 'sent@example.test', tokens.sent, 'sent');
        await mail('password_reset', 'waiting@example.test', tokens.waiting, 'pending');
        await mail('recipient_confirmation', 'rita@example.org', tokens.confirm, 'pending');
        await c.query(
          `INSERT INTO notification_recipients (workspace_id, address, token_hash, token_expires_at, confirmation_sent_at)
           VALUES ($1, 'rita@example.org', $2, now() + interval '7 days', now())`,
          [id, hashLinkToken(tokens.confirm)],
        );
        return id;
      });
      await runMigrations(ds);
    } finally {
      await ds.destroy();
    }

    const dump = await dumpDatabase(url);
    for (const token of Object.values(tokens)) expect(dump.includes(token)).toBe(false);
    const rows = await withClient(
      url,
      async (c) =>
        (await c.query(`SELECT kind, status, last_error FROM mail_outbox WHERE workspace_id = $1 ORDER BY kind`, [workspaceId])).rows,
    );
    expect(rows).toEqual([
      { kind: 'invitation', status: 'sent', last_error: null },
      { kind: 'password_reset', status: 'failed', last_error: expect.stringMatching(/withdrawn/) },
      { kind: 'recipient_confirmation', status: 'failed', last_error: expect.stringMatching(/withdrawn/) },
    ]);

    // The withdrawn confirmation: the next pass mails the address a fresh link, which works.
    const smtp = await startMailCatcher();
    const t = await bootTestApp({ databaseUrl: url, config: mailConfig(smtp.url, { publicUrl: PUBLIC_URL }) });
    try {
      await tick(t, new Date());
      await drainMail(t);
      await smtp.waitFor(1);
      const link = linkIn(smtp, 'rita@example.org');
      expect(link.token).not.toBe(tokens.confirm);
      const u = new URL(link.url);
      await request(t.app.getHttpServer())
        .get(u.pathname + u.search)
        .expect(200);
      expect((await dumpDatabase(url)).includes(link.token)).toBe(false);
    } finally {
      await t.close();
      await smtp.close();
    }
  });
});
