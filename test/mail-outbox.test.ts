import { simpleParser } from 'mailparser';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { NotificationsModule } from '../src/notifications/notifications.module';
import { createTestDatabase, withClient } from './support/database';
import { drainMail, mailConfig, preconfirmRecipients, startMailCatcher, tick } from './support/mail';
import { useMedium } from './support/medium';
import { saveNotificationSettings } from './support/medium-factories';
import { freePort } from './support/net';
import { ServiceProcess } from './support/process';
import { api } from './support/service';
import { waitUntil } from './support/poll';

const emlFiles = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.eml')) : []);

// The mail module's outbox driver, driven by the notifications' tick (a medium test, ./support/medium.ts).
describe('mail without SMTP_URL: the .eml outbox', () => {
  const t = useMedium({ modules: [NotificationsModule], config: mailConfig(null) });
  let dataDir: string;
  beforeAll(() => {
    dataDir = t.config.dataDir;
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('writes each mail as one .eml file under HERALD_DATA_DIR/outbox/ that a mail client can read', async () => {
    const ws = await t.workspace('Laptop');
    await saveNotificationSettings(t, ws, {
      digest: { enabled: true, recipients: ['me@example.com'], hour: 0, timezone: 'UTC', sendWhenEmpty: true },
    });
    const outbox = path.join(t.config.dataDir, 'outbox');
    await tick(t, new Date(Date.now() + 86_400_000));
    await drainMail(t);
    await tick(t, new Date(Date.now() + 86_400_000 + 60_000));
    const files = emlFiles(outbox);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^\d{8}T\d{6}Z-digest-[0-9a-f-]{36}\.eml$/);
    const raw = fs.readFileSync(path.join(outbox, files[0]));
    const mail = await simpleParser(raw);
    expect(mail.subject).toBe('Herald: no failures in the last 24 hours');
    expect(mail.to && !Array.isArray(mail.to) ? mail.to.text : '').toBe('me@example.com');
    expect(mail.text).toContain('Herald daily digest for Laptop');
    expect(mail.html).toContain('<!DOCTYPE html>');
    expect(raw.toString('latin1')).toMatch(/\r\n\r\n/); // CRLF line ends, as RFC 5322 has them
    const [row] = await withClient(t.databaseUrl, async (db) => (await db.query(`SELECT status, response FROM mail_outbox`)).rows);
    expect(row).toEqual({ status: 'sent', response: `written to ${path.join(outbox, files[0])}` });
  });
});

describe('mail from the real service process', () => {
  const started: ServiceProcess[] = [];
  const dirs: string[] = [];
  afterAll(async () => {
    await Promise.all(started.map((p) => p.stop('SIGKILL')));
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  async function startService(env: Record<string, string>) {
    const { url } = await createTestDatabase();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-mail-'));
    dirs.push(dataDir);
    const key = `mail-test-bootstrap-${Math.random().toString(36).slice(2)}`;
    const p = ServiceProcess.start(
      {
        DATABASE_URL: url,
        HERALD_API_KEY: key,
        HERALD_DATA_DIR: dataDir,
        HERALD_SECRET_KEY: 'ab'.repeat(32),
        HERALD_ALLOW_PRIVATE_URLS: 'true',
        NOTIFICATIONS_POLL_INTERVAL_MS: '100',
        WORKER_ENABLED: 'false',
        ...env,
      },
      await freePort(),
    );
    started.push(p);
    await p.waitReady();
    // An account turns needs_reauth (what the queue does on a 401): the notifier's own timer sends the alert.
    const account = await api<{ id: string }>(p, key, 'POST', '/v1/accounts', {
      provider: 'webhook',
      name: 'Blog',
      config: { url: 'http://127.0.0.1:9/hook' },
    });
    await preconfirmRecipients(url, key, ['ops@example.com']);
    await api(p, key, 'PUT', '/v1/settings/notifications', { digest: { recipients: ['ops@example.com'] } });
    await withClient(url, (db) =>
      db.query(`UPDATE accounts SET status = 'needs_reauth', status_reason = 'HTTP 401' WHERE id = $1`, [account.body.id]),
    );
    return { p, dataDir };
  }

  it('with no SMTP_URL, `npm start` writes the alert as an .eml file in the outbox folder and says where', async () => {
    const { p, dataDir } = await startService({});
    const outbox = path.join(dataDir, 'outbox');
    await waitUntil(() => emlFiles(outbox).length === 1, 15_000, 'an .eml file in the outbox');
    const mail = await simpleParser(fs.readFileSync(path.join(outbox, emlFiles(outbox)[0])));
    expect(mail.subject).toBe('Herald: "Blog" (webhook) needs to be reconnected');
    expect(p.text()).toContain(`.eml files in ${dataDir}/outbox/`);
  });

  it('sends an alert, and its refused try again when due, with no poll: woken by the outbox NOTIFY and the retry time', async () => {
    const smtp = await startMailCatcher();
    try {
      // The first try is refused (451, greylisting); the retry is due within half a second.
      smtp.refuseNext(1, 451);
      await startService({
        SMTP_URL: smtp.url,
        // No poll (ten minutes): without the wake-ups the alert waits for the minute's sweep, and
        // its retry for the next one, a minute later.
        NOTIFICATIONS_POLL_INTERVAL_MS: '600000',
        MAIL_RETRY_BASE_DELAY_MS: '500',
        MAIL_RETRY_MAX_DELAY_MS: '500',
      });
      await waitUntil(() => smtp.tries >= 1, 70_000, 'the first try of the alert');
      // Sweeps are a minute apart: a retry within 30 s of the refusal came from its due time.
      const [mail] = await smtp.waitFor(1, 30_000);
      expect(mail.parsed.subject).toBe('Herald: "Blog" (webhook) needs to be reconnected');
      expect(smtp.tries).toBe(2);
    } finally {
      await smtp.close();
    }
  }, 150_000);

  it('with SMTP_URL, sends through the server and never writes its password to the log', async () => {
    const smtp = await startMailCatcher({ auth: { user: 'herald', pass: 's3cret-smtp-pass' } });
    try {
      const { p } = await startService({ SMTP_URL: smtp.url.replace('smtp://', 'smtp://herald:s3cret-smtp-pass@'), LOG_LEVEL: 'trace' });
      const [mail] = await smtp.waitFor(1, 30_000);
      expect(mail.parsed.subject).toBe('Herald: "Blog" (webhook) needs to be reconnected');
      expect(await p.stop('SIGTERM')).toBe(0);
      expect(p.text()).toContain('mail goes to the SMTP server of SMTP_URL');
      expect(p.text()).not.toContain('s3cret-smtp-pass');
    } finally {
      await smtp.close();
    }
  });
});
