import { simpleParser, ParsedMail } from 'mailparser';
import { DEADLINE_MS } from './poll';
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import { SMTPServer, SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import type { HeraldConfig } from '../../src/config/config';
import { DigestService } from '../../src/digest/digest.service';
import { NotificationSettingsService } from '../../src/notifications/notification-settings.service';
import { MailSender } from '../../src/mail/mail-sender.service';
import { NotificationsScheduler } from '../../src/notifications/notifications.scheduler';
import type { INestApplicationContext } from '@nestjs/common';
import type { TestApp } from './app';
import { withClient } from './database';
import { bearer } from './config';

/**
 * A real SMTP server on loopback (the `smtp-server` package) for mail tests: it accepts what
 * Herald sends, parses each message with `mailparser`, and can refuse tries on purpose with a
 * 4xx or 5xx reply (RFC 5321 §4.2.1), as real servers do when greylisting or over quota.
 */
export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  parsed: ParsedMail;
}

export interface MailCatcher {
  /** `smtp://127.0.0.1:<port>`: no TLS, no authentication. */
  readonly url: string;
  /** Messages accepted, in order. */
  readonly received: ReceivedMail[];
  /** Every DATA transfer seen, accepted or refused. */
  readonly tries: number;
  /** Refuse the next `n` messages after their data, with this reply code (e.g. 451: try again later). */
  refuseNext(n: number, code: number, message?: string): void;
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

/**
 * The catchers running in this test file, by URL: a helper that must read a mailed link (the
 * first person's confirmation, test/support/people.ts) finds the catcher of the app's SMTP_URL.
 */
const catchers = new Map<string, MailCatcher>();

/** The running catcher at `smtpUrl` (an app's config.smtpUrl), or undefined. */
export function mailCatcherAt(smtpUrl: string | null): MailCatcher | undefined {
  return smtpUrl === null ? undefined : catchers.get(smtpUrl);
}

/** The link (with its one-use token) of the newest mail to `to` that holds one, once it has arrived. */
export async function mailedLinkTo(smtp: MailCatcher, to: string, timeoutMs = DEADLINE_MS): Promise<string> {
  const linkOf = (m: ReceivedMail) => /https?:\/\/\S+token=[A-Za-z0-9_-]{43}/.exec(m.parsed.text ?? '')?.[0];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const mail = [...smtp.received].reverse().find((m) => m.to.includes(to) && linkOf(m));
    if (mail) return linkOf(mail)!;
    if (Date.now() > deadline) throw new Error(`no mail with a link to ${to} within ${timeoutMs} ms`);
    await smtp.waitFor(smtp.received.length + 1, Math.max(1, deadline - Date.now())).catch(() => undefined);
  }
}

/** `auth`: require this user and password (AUTH PLAIN/LOGIN, allowed without TLS on loopback). */
export async function startMailCatcher(options: { auth?: { user: string; pass: string } } = {}): Promise<MailCatcher> {
  const received: ReceivedMail[] = [];
  const events = new EventEmitter();
  let refusals: { left: number; code: number; message: string } = { left: 0, code: 451, message: '' };
  let tries = 0;

  const auth = options.auth;
  const server = new SMTPServer({
    disabledCommands: auth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    allowInsecureAuth: true,
    authOptional: !auth,
    logger: false,
    onAuth(a, _session, callback) {
      if (auth && a.username === auth.user && a.password === auth.pass) callback(null, { user: a.username });
      else callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback: (err?: Error | null) => void) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        tries++;
        if (refusals.left > 0) {
          refusals.left--;
          const err = new Error(refusals.message) as Error & { responseCode: number };
          err.responseCode = refusals.code;
          callback(err);
          return;
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        simpleParser(raw).then(
          (parsed) => {
            received.push({
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to: session.envelope.rcptTo.map((r) => r.address),
              raw,
              parsed,
            });
            events.emit('mail');
            callback();
          },
          (err: Error) => callback(err),
        );
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  const url = `smtp://127.0.0.1:${port}`;

  const catcher: MailCatcher = {
    url,
    received,
    get tries() {
      return tries;
    },
    refuseNext(n, code, message = code >= 500 ? 'Requested action not taken' : 'Try again later') {
      refusals = { left: n, code, message };
    },
    waitFor(n, timeoutMs = DEADLINE_MS) {
      if (received.length >= n) return Promise.resolve(received.slice());
      return new Promise((resolve, reject) => {
        const on = () => {
          if (received.length < n) return;
          clearTimeout(timer);
          events.off('mail', on);
          resolve(received.slice());
        };
        const timer = setTimeout(() => {
          events.off('mail', on);
          reject(new Error(`the SMTP server got ${received.length} message(s), expected ${n} within ${timeoutMs} ms`));
        }, timeoutMs);
        events.on('mail', on);
      });
    },
    close: () => {
      catchers.delete(url);
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  catchers.set(url, catcher);
  return catcher;
}

// ---- driving Herald's notifications in tests ----

/**
 * Config for notification tests: the scheduler's own timers off (the test drives the clock by
 * calling sweep(now) itself), fast mail retries, mail to `smtpUrl` (null: the .eml outbox).
 */
export function mailConfig(smtpUrl: string | null, overrides: Partial<HeraldConfig> = {}): Partial<HeraldConfig> {
  return {
    smtpUrl,
    allowPrivateUrls: true,
    mailFrom: 'Herald <herald@example.com>',
    publicUrl: 'https://herald.example.com',
    notifications: { enabled: false, pollIntervalMs: 100, sweepIntervalSeconds: 60 },
    mail: { maxAttempts: 4, retryBaseDelayMs: 20, retryMaxDelayMs: 100, timeoutMs: 5_000 },
    ...overrides,
  };
}

export interface Workspace {
  id: string;
  key: string;
}

/** A new workspace through the API (the bootstrap key may create them). */
export async function newWorkspace(t: TestApp, name = 'Team'): Promise<Workspace> {
  const res = await t.http().post('/v1/workspaces').set(bearer(t.adminKey)).send({ name });
  if (res.status !== 201) throw new Error(`workspace creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.workspace.id, key: res.body.apiKey.key };
}

/**
 * Marks `addresses` as confirmed recipients of the key's workspace, as if each had used the
 * mailed link (test/recipient-confirmation.test.ts covers the link itself). Done before the list
 * is saved, so no confirmation mail is written for them: the mail tests count the mails they
 * are about.
 */
export async function preconfirmRecipients(databaseUrl: string, key: string, addresses: string[]): Promise<void> {
  if (addresses.length === 0) return;
  await withClient(databaseUrl, (db) =>
    db.query(
      `INSERT INTO notification_recipients (workspace_id, address, confirmed_at, confirmation_sent_at)
       SELECT k.workspace_id, a, now(), now() FROM api_keys k CROSS JOIN unnest($2::text[]) AS a WHERE k.key_hash = $1
       ON CONFLICT (workspace_id, address_key) DO UPDATE SET listed = true, confirmed_at = now(), token_hash = NULL, token_expires_at = NULL`,
      [createHash('sha256').update(key, 'utf8').digest(), addresses],
    ),
  );
}

/** Saves the settings through the API, its recipients confirmed beforehand (preconfirmRecipients). */
export async function saveNotificationSettings(t: TestApp, key: string, body: Record<string, unknown>): Promise<void> {
  const recipients = (body.digest as { recipients?: unknown } | undefined)?.recipients;
  if (Array.isArray(recipients)) await preconfirmRecipients(t.databaseUrl, key, recipients as string[]);
  const res = await t.http().put('/v1/settings/notifications').set(bearer(key)).send(body);
  if (res.status !== 200) throw new Error(`settings failed: ${res.status} ${JSON.stringify(res.body)}`);
}

/** What the driving helpers below need of a running Herald: a TestApp, or a medium context (./medium.ts). */
export interface RunningHerald {
  app: Pick<INestApplicationContext, 'get'>;
  databaseUrl: string;
}

/** One tick of the minute's work at `now`: token scan, digest sweep, alerts, mail out. */
export function tick(t: RunningHerald, now: Date): Promise<void> {
  return t.app.get(NotificationsScheduler).sweep(now);
}

/** The digest sweep alone (what two processes race on). */
export function sweepDigests(t: RunningHerald, now: Date) {
  return t.app.get(DigestService).sweep(now, t.app.get(NotificationSettingsService).digestSettings);
}

/**
 * Sends due mail until nothing is left that falls due within `timeoutMs` (retries included):
 * a mail whose next try lies beyond the deadline ends the wait at once. (It used to wait 5 s for
 * everything waiting, and returned with mail still unsent on a loaded machine.)
 */
export async function drainMail(t: RunningHerald, timeoutMs = DEADLINE_MS): Promise<void> {
  const sender = t.app.get(MailSender);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await sender.deliverDue();
    const soon = await withClient(
      t.databaseUrl,
      async (db) =>
        (
          await db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM mail_outbox
             WHERE status = 'sending' OR (status = 'pending' AND next_attempt_at <= now() + $1 * interval '1 millisecond')`,
            [Math.max(0, deadline - Date.now())],
          )
        ).rows[0].n,
    );
    if (soon === 0 || Date.now() > deadline) return;
    await new Promise((r) => setTimeout(r, 25));
  }
}
