import { localTime } from '../src/common/zoned-time';
import { DeadLetterModule } from '../src/dead-letter/dead-letter.module';
import { DeadLetterService } from '../src/dead-letter/dead-letter.service';
import { DigestRepository } from '../src/digest/digest.repository';
import { MetricsService } from '../src/metrics/metrics.service';
import { NotificationSettingsService } from '../src/notifications/notification-settings.service';
import { NotificationsModule } from '../src/notifications/notifications.module';
import { PostsModule } from '../src/posts/posts.module';
import { withClient } from './support/database';
import { killJobs } from './support/dlq';
import { drainMail, MailCatcher, mailConfig, preconfirmRecipients, startMailCatcher, sweepDigests, tick } from './support/mail';
import { bootMedium, Medium, MediumWorkspace, useMedium } from './support/medium';
import { createPost, saveNotificationSettings, webhookAccount } from './support/medium-factories';

/**
 * The daily digest (docs/notifications.md): real PostgreSQL, a real SMTP server on loopback,
 * messages parsed with mailparser; a medium test (./support/medium.ts): the notification,
 * digest, mail, posts and dead-letter modules without HTTP (what the settings routes answer is
 * test/digest-settings.test.ts's). The clock is driven: the tests call the minute's sweep with
 * the instant they want, never waiting for real hours. Jobs die at the real time (the
 * database's), so the driven instants are chosen around it.
 */

const HOUR = 3_600_000;
const floorHour = (ms: number) => Math.floor(ms / HOUR) * HOUR;

/** A webhook account and `texts.length` posts to it whose jobs are dead (permanent, HTTP 400) now. */
async function deadJobs(
  t: Medium,
  ws: MediumWorkspace,
  texts: string[],
  accountName = 'Company blog',
): Promise<{ accountId: string; jobIds: string[] }> {
  const account = await webhookAccount(t, ws.auth, 'http://127.0.0.1:9/hook', { name: accountName });
  const jobIds: string[] = [];
  for (const text of texts) {
    const post = await createPost(t, ws.auth, {
      text,
      targets: [{ accountId: account.id }],
      scheduledAt: new Date(Date.now() + 86_400_000).toISOString(),
    });
    jobIds.push(post.jobs[0].id);
  }
  await killJobs(t.databaseUrl, jobIds, { lastError: 'HTTP 400: {"error":"title is required"}' });
  return { accountId: account.id, jobIds };
}

async function digestRows(t: Medium, workspaceId: string) {
  return withClient(
    t.databaseUrl,
    async (db) =>
      (
        await db.query(
          `SELECT local_date::text AS "localDate", outcome, window_start AS "windowStart", window_end AS "windowEnd"
       FROM digests WHERE workspace_id = $1 ORDER BY local_date`,
          [workspaceId],
        )
      ).rows as { localDate: string; outcome: string; windowStart: Date; windowEnd: Date }[],
  );
}

/** The modules a digest goes through: notifications (settings, the schedule, digest, mail), posts, the dead-letter queue. */
const MODULES = [NotificationsModule, PostsModule, DeadLetterModule];

describe('daily digest', () => {
  let smtp: MailCatcher;

  beforeAll(async () => {
    smtp = await startMailCatcher();
  });
  afterAll(async () => {
    await smtp.close();
  });
  beforeEach(() => {
    smtp.received.length = 0;
    smtp.refuseNext(0, 451);
  });
  // A fresh database per test: the driven clocks of one test must not meet another's digests.
  const t = useMedium({ modules: MODULES, config: () => mailConfig(smtp.url), each: true });
  const settingsOf = (ws: MediumWorkspace) => t.get(NotificationSettingsService).get(ws.id);
  const metrics = () => t.get(MetricsService).metrics();

  it('sends a workspace with two dead jobs one digest at its local hour, listing both with links that open them', async () => {
    const ws = await t.workspace('Acme');
    const { accountId, jobIds } = await deadJobs(t, ws, ['Spring launch is live!', 'Our Q3 numbers are in']);
    const zone = 'Asia/Tokyo';
    const at = floorHour(Date.now()) + 2 * HOUR; // the digest hour: two hours from now, on the hour
    await saveNotificationSettings(t, ws, {
      digest: {
        enabled: true,
        recipients: ['team@example.com', 'lead@example.com'],
        hour: localTime(new Date(at), zone).hour,
        timezone: zone,
      },
    });

    await tick(t, new Date(at - HOUR)); // an hour early: nothing
    await tick(t, new Date(at - 60_000));
    expect(smtp.received).toHaveLength(0);
    await tick(t, new Date(at)); // the hour
    await drainMail(t);
    await tick(t, new Date(at + 60_000)); // later ticks of the same day: nothing more
    await tick(t, new Date(at + 5 * HOUR));
    await drainMail(t);

    expect(smtp.received).toHaveLength(1);
    const [mail] = smtp.received;
    expect(mail.to).toEqual(['team@example.com', 'lead@example.com']);
    expect(mail.from).toBe('herald@example.com');
    expect(mail.parsed.subject).toBe('Herald: 2 posts failed in the last 24 hours');
    expect(mail.parsed.headers.get('auto-submitted')).toBe('auto-generated');
    const text = mail.parsed.text ?? '';
    const html = mail.parsed.html || '';
    expect(text).toContain('Herald daily digest for Acme');
    expect(text).toContain('Company blog (webhook): 0 published, 2 failed attempts, 2 newly dead-lettered');
    expect(text).toContain('"Spring launch is live!"');
    expect(text).toContain('"Our Q3 numbers are in"');
    expect(text).toContain('Last error: HTTP 400: {"error":"title is required"}');
    for (const id of jobIds) {
      const link = `https://herald.example.com/settings/failed-posts/${id}`;
      expect(text).toContain(`Open: ${link}`);
      expect(html).toContain(`href="${link}"`);
      // The link names the job the failed-posts page opens: the same id the DLQ answers for.
      const dlq = await t.get(DeadLetterService).get(ws.id, id);
      expect(dlq.id).toBe(id);
    }
    expect(html).toContain(`href="https://herald.example.com/settings/failed-posts?account=${accountId}"`);

    const settings = await settingsOf(ws);
    expect(settings.lastDigest).toMatchObject({ outcome: 'queued', mail: { status: 'sent', attempts: 1 } });
  });

  it('sends one digest when two Herald processes tick through the same hour, every second around its start', async () => {
    const second = await bootMedium({ modules: MODULES, databaseUrl: t.databaseUrl, config: mailConfig(smtp.url) });
    try {
      const workspaces = [await t.workspace('One'), await t.workspace('Two')];
      for (const ws of workspaces) await deadJobs(t, ws, ['A post that failed']);
      const zone = 'Europe/Paris';
      const at = floorHour(Date.now()) + HOUR;
      for (const ws of workspaces) {
        await saveNotificationSettings(t, ws, {
          digest: { enabled: true, recipients: ['team@example.com'], hour: localTime(new Date(at), zone).hour, timezone: zone },
        });
      }
      // Both tick every second around the hour's start, where two sweeps can meet, then every
      // 15 s to its end (every second through the hour was 7,260 sweeps one after the other,
      // more than four minutes on a loaded machine).
      const claims: string[] = [];
      const seconds = [...Array.from({ length: 150 }, (_, i) => i - 30), ...Array.from({ length: 232 }, (_, i) => 120 + i * 15)];
      for (const s of seconds) {
        const now = new Date(at + s * 1000);
        const results = await Promise.all([sweepDigests(t, now), sweepDigests(second, now)]);
        for (const r of results) for (const c of r.claimed) claims.push(`${c.workspaceId} ${c.localDate}`);
      }
      await Promise.all([drainMail(t), drainMail(second)]);
      expect(claims.sort()).toEqual(workspaces.map((ws) => `${ws.id} ${localTime(new Date(at), zone).date}`).sort());
      expect(smtp.received).toHaveLength(2);
      for (const ws of workspaces) expect(await digestRows(t, ws.id)).toHaveLength(1);
    } finally {
      await second.close();
    }
  }, 240_000);

  it('admits one row per workspace and local day even to claims that skip the advisory lock (the UNIQUE row is the guarantee)', async () => {
    const ws = await t.workspace();
    const repo = t.app.get(DigestRepository);
    const record = {
      workspaceId: ws.id,
      localDate: '2027-01-15',
      timezone: 'UTC',
      hour: 8,
      windowStart: new Date('2027-01-14T08:00:00Z'),
      windowEnd: new Date('2027-01-15T08:00:00Z'),
      outcome: 'empty' as const,
      mailId: null,
      deadJobs: 0,
      failedAttempts: 0,
      accountsAttention: 0,
    };
    const results = await Promise.all(Array.from({ length: 8 }, () => repo.transaction((tx) => repo.insert(tx, record))));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await digestRows(t, ws.id)).toHaveLength(1);
  });

  it('sends a workspace in America/New_York exactly one digest at 08:00 local on each day around both DST changes', async () => {
    const ws = await t.workspace('New York');
    await saveNotificationSettings(t, ws, {
      digest: { enabled: true, recipients: ['ny@example.com'], hour: 8, timezone: 'America/New_York', sendWhenEmpty: true },
    });
    const run = async (from: string, to: string) => {
      const claims: [string, string][] = [];
      for (let ms = Date.parse(from); ms <= Date.parse(to); ms += 5 * 60_000) {
        const { claimed } = await sweepDigests(t, new Date(ms));
        for (const c of claimed) claims.push([c.localDate, new Date(ms).toISOString()]);
      }
      return claims;
    };
    // Spring forward on Sunday 2027-03-14 (02:00 EST → 03:00 EDT). The first tick, 08:30 EST on
    // the 12th, sends the 12th's digest (the digest was switched on long before).
    expect(await run('2027-03-12T13:30:00Z', '2027-03-16T23:55:00Z')).toEqual([
      ['2027-03-12', '2027-03-12T13:30:00.000Z'],
      ['2027-03-13', '2027-03-13T13:00:00.000Z'],
      ['2027-03-14', '2027-03-14T12:00:00.000Z'],
      ['2027-03-15', '2027-03-15T12:00:00.000Z'],
      ['2027-03-16', '2027-03-16T12:00:00.000Z'],
    ]);
    // Fall back on Sunday 2027-11-07 (02:00 EDT → 01:00 EST).
    expect(await run('2027-11-04T12:30:00Z', '2027-11-09T23:55:00Z')).toEqual([
      ['2027-11-04', '2027-11-04T12:30:00.000Z'],
      ['2027-11-05', '2027-11-05T12:00:00.000Z'],
      ['2027-11-06', '2027-11-06T12:00:00.000Z'],
      ['2027-11-07', '2027-11-07T13:00:00.000Z'],
      ['2027-11-08', '2027-11-08T13:00:00.000Z'],
      ['2027-11-09', '2027-11-09T13:00:00.000Z'],
    ]);
    // Each digest covers the time since the previous one: 23 hours across spring forward, 25 across fall back.
    const rows = await digestRows(t, ws.id);
    const hours = Object.fromEntries(rows.map((r) => [r.localDate, (r.windowEnd.getTime() - r.windowStart.getTime()) / HOUR]));
    expect(hours['2027-03-14']).toBe(23);
    expect(hours['2027-03-15']).toBe(24);
    expect(hours['2027-11-07']).toBe(25);
    expect(hours['2027-11-08']).toBe(24);
    await drainMail(t);
    expect(smtp.received).toHaveLength(11);
    expect(new Set(smtp.received.map((m) => m.parsed.messageId)).size).toBe(11);
  }, 240_000);

  it('still delivers exactly one digest when the SMTP server refuses the first try with a 4xx', async () => {
    const ws = await t.workspace();
    await deadJobs(t, ws, ['Refused once']);
    const at = floorHour(Date.now()) + HOUR;
    await saveNotificationSettings(t, ws, {
      digest: { enabled: true, recipients: ['team@example.com'], hour: localTime(new Date(at), 'UTC').hour, timezone: 'UTC' },
    });
    smtp.refuseNext(1, 451, 'Greylisted, try again later');

    await tick(t, new Date(at));
    expect(smtp.tries).toBeGreaterThanOrEqual(1);
    await drainMail(t);
    await tick(t, new Date(at + 60_000));
    await drainMail(t);

    expect(smtp.received).toHaveLength(1);
    expect(smtp.received[0].parsed.subject).toBe('Herald: 1 post failed in the last 24 hours');
    const [row] = await withClient(
      t.databaseUrl,
      async (db) =>
        (await db.query(`SELECT status, attempts, last_error, response FROM mail_outbox WHERE workspace_id = $1`, [ws.id])).rows,
    );
    expect(row).toMatchObject({ status: 'sent', attempts: 2 });
    expect(row.last_error).toContain('451 Greylisted, try again later');
    expect(row.response).toMatch(/^250 /);
    const scraped = await metrics();
    expect(scraped).toMatch(/herald_mails_sent_total\{kind="digest"\} 1\n/);
    expect(scraped).toMatch(/herald_mails_failed_total\{kind="digest",outcome="retry"\} 1\n/);
    expect(scraped).toMatch(/herald_mail_outbox\{kind="digest",state="pending"\} 0\n/);
  });

  it('records a digest the server refuses for good (5xx) as failed, and does not send it again', async () => {
    const ws = await t.workspace();
    await deadJobs(t, ws, ['Refused for good']);
    const at = floorHour(Date.now()) + HOUR;
    await saveNotificationSettings(t, ws, {
      digest: { enabled: true, recipients: ['team@example.com'], hour: localTime(new Date(at), 'UTC').hour, timezone: 'UTC' },
    });
    smtp.refuseNext(1, 554, 'Message rejected as spam');
    await tick(t, new Date(at));
    await drainMail(t);
    await tick(t, new Date(at + 60_000));
    expect(smtp.received).toHaveLength(0);
    const settings = await settingsOf(ws);
    expect(settings.lastDigest?.mail).toMatchObject({ status: 'failed', attempts: 1, sentAt: null });
    expect(settings.lastDigest?.mail?.lastError).toContain('554 Message rejected as spam');
    expect(await metrics()).toMatch(/herald_mails_failed_total\{kind="digest",outcome="gave_up"\} 1\n/);
  });

  it('escapes a post text containing HTML in the HTML part, and keeps it as written in the text part', async () => {
    const ws = await t.workspace();
    const evil = '<script>alert("pwned")</script><img src=x onerror=alert(1)> <b>bold</b> & more';
    await deadJobs(t, ws, [evil], '<i>Blog</i>');
    const at = floorHour(Date.now()) + HOUR;
    await saveNotificationSettings(t, ws, {
      digest: { enabled: true, recipients: ['team@example.com'], hour: localTime(new Date(at), 'UTC').hour, timezone: 'UTC' },
    });
    await tick(t, new Date(at));
    await drainMail(t);
    const [mail] = await smtp.waitFor(1);
    const html = mail.parsed.html || '';
    expect(html).not.toMatch(/<script|<img|<b>|<i>/);
    expect(html).toContain(
      '&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt; &lt;b&gt;bold&lt;/b&gt; &amp; more',
    );
    expect(html).toContain('&lt;i&gt;Blog&lt;/i&gt;');
    expect(mail.parsed.text).toContain(`"${evil}"`);
  });

  it('sends nothing for a day without failures, unless sendWhenEmpty', async () => {
    const quiet = await t.workspace('Quiet');
    const wanted = await t.workspace('Wants it anyway');
    const at = floorHour(Date.now()) + HOUR;
    const hour = localTime(new Date(at), 'UTC').hour;
    await saveNotificationSettings(t, quiet, { digest: { enabled: true, recipients: ['quiet@example.com'], hour, timezone: 'UTC' } });
    await saveNotificationSettings(t, wanted, {
      digest: { enabled: true, recipients: ['wanted@example.com'], hour, timezone: 'UTC', sendWhenEmpty: true },
    });
    await tick(t, new Date(at));
    await tick(t, new Date(at + 10 * 60_000));
    await drainMail(t);
    expect(smtp.received.map((m) => [m.to, m.parsed.subject])).toEqual([
      [['wanted@example.com'], 'Herald: no failures in the last 24 hours'],
    ]);
    // The quiet day is still recorded as done: it is not "missed", and not sent later.
    expect((await digestRows(t, quiet.id)).map((r) => r.outcome)).toEqual(['empty']);
  });

  it('catches up a digest missed while Herald was down once, covering the whole time since the previous one', async () => {
    const ws = await t.workspace();
    const first = floorHour(Date.now()) - 50 * HOUR; // a digest was sent 50 hours ago
    const hour = localTime(new Date(first), 'UTC').hour;
    await withClient(t.databaseUrl, (db) =>
      db.query(
        `INSERT INTO notification_settings (workspace_id, digest_enabled, recipients, digest_hour, timezone, send_when_empty, digest_enabled_at)
         VALUES ($1, true, '{team@example.com}', $2, 'UTC', true, $3)`,
        [ws.id, hour, new Date(first - 7 * 24 * HOUR)],
      ),
    );
    await preconfirmRecipients(t.databaseUrl, ws.key, ['team@example.com']);
    await tick(t, new Date(first));
    await drainMail(t);
    expect(smtp.received).toHaveLength(1);

    // Herald is down until two hours from now; meanwhile a job died. One digest, not two or three.
    await deadJobs(t, ws, ['Died while nobody was looking']);
    const back = floorHour(Date.now()) + 2 * HOUR + 5 * 60_000;
    await tick(t, new Date(back));
    await tick(t, new Date(back + 60_000));
    await drainMail(t);
    expect(smtp.received).toHaveLength(2);
    const rows = await digestRows(t, ws.id);
    expect(rows).toHaveLength(2);
    expect(rows[1].windowStart.getTime()).toBe(first);
    expect(rows[1].windowEnd.getTime()).toBe(back);
    expect(smtp.received[1].parsed.subject).toBe('Herald: 1 post failed in the last 2 days');
    expect(smtp.received[1].parsed.text).toContain('"Died while nobody was looking"');
  });
});
