import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { UpdateAccountDto } from '../src/accounts/accounts.dto';
import { AccountsService } from '../src/accounts/accounts.service';
import { MetricsService } from '../src/metrics/metrics.service';
import { NotificationsModule } from '../src/notifications/notifications.module';
import { PostsModule } from '../src/posts/posts.module';
import { WorkerModule } from '../src/worker/worker.module';
import { withClient } from './support/database';
import { insertAccount } from './support/dlq';
import { drainMail, MailCatcher, mailConfig, startMailCatcher, tick } from './support/mail';
import { Medium, MediumWorkspace, useMedium } from './support/medium';
import { createPost, saveNotificationSettings, webhookAccount } from './support/medium-factories';
import { pollUntil } from './support/poll';
import { startReceiver, Receiver } from './support/receiver';
import { fastEngine } from './support/config';

/**
 * Alerts (docs/notifications.md): account state changes become one mail per incident, written to an
 * outbox in the same transaction as the change (a trigger on accounts), sent at once. Medium tests
 * (./support/medium.ts): the worker, notifications and posts modules without HTTP.
 */

/** PATCH /v1/accounts/:id's service call. */
async function updateAccount(t: Medium, ws: MediumWorkspace, id: string, body: Record<string, unknown>): Promise<void> {
  await t.get(AccountsService).update(ws.auth, id, await t.input(UpdateAccountDto, body));
}

async function events(t: Medium, accountId: string) {
  return withClient(
    t.databaseUrl,
    async (db) =>
      (await db.query(`SELECT kind, consecutive_failures AS n, outcome FROM account_events WHERE account_id = $1 ORDER BY id`, [accountId]))
        .rows as {
        kind: string;
        n: number;
        outcome: string | null;
      }[],
  );
}

/**
 * Nothing is left that could still become an alert: the account's jobs are all finished or
 * paused (no attempt to come), every account event was picked up, and no mail waits in the
 * outbox. Checked instead of waiting "time enough for a second alert".
 */
async function quiet(t: Medium, accountId: string): Promise<void> {
  await pollUntil(
    'the account, its events and the outbox to settle',
    () =>
      withClient(t.databaseUrl, async (db) => {
        const { rows } = await db.query<{ jobs: number; events: number; mails: number }>(
          `SELECT (SELECT count(*)::int FROM jobs WHERE account_id = $1 AND status IN ('scheduled', 'in_progress')) AS jobs,
                  (SELECT count(*)::int FROM account_events WHERE account_id = $1 AND outcome IS NULL) AS events,
                  (SELECT count(*)::int FROM mail_outbox WHERE status IN ('pending', 'sending')) AS mails`,
          [accountId],
        );
        return rows[0];
      }),
    (n) => n.jobs === 0 && n.events === 0 && n.mails === 0,
  );
}

describe('alerts from a real worker', () => {
  let smtp: MailCatcher;
  let receiver: Receiver;

  beforeAll(async () => {
    smtp = await startMailCatcher();
    receiver = await startReceiver();
  });
  // The worker and the notifier run for real here (their own timers), as in `npm start`.
  const t = useMedium({
    modules: [WorkerModule, NotificationsModule, PostsModule],
    config: () => {
      const engine = fastEngine({ circuit: { failureThreshold: 100, cooldownMs: 30_000, disableThreshold: 200 } });
      return { ...engine, ...mailConfig(smtp.url), notifications: { enabled: true, pollIntervalMs: 100, sweepIntervalSeconds: 60 } };
    },
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
    await smtp.close();
  });

  it('sends one alert when an account turns needs_reauth after 20 failed jobs, and another for a second incident after recovery', async () => {
    const ws = await t.workspace('Acme');
    await saveNotificationSettings(t, ws, { digest: { recipients: ['oncall@example.com'] } });
    const account = await webhookAccount(t, ws.auth, receiver.urlFor('/hook'), {
      name: 'Company blog',
      retryPolicy: { maxAttempts: 1 },
    });
    // 19 jobs fail (503, one attempt each: dead), the 20th is refused (401): the account needs re-authentication.
    receiver.setHandler((_req, i) => (i < 19 ? 503 : 401));
    for (let i = 0; i < 20; i++) await createPost(t, ws.auth, { text: `post ${i}`, targets: [{ accountId: account.id }] });

    await smtp.waitFor(1, 30_000);
    await quiet(t, account.id);
    expect(receiver.requests).toHaveLength(20);
    expect(smtp.received).toHaveLength(1);
    expect(smtp.received[0].to).toEqual(['oncall@example.com']);
    expect(smtp.received[0].parsed.subject).toBe('Herald: "Company blog" (webhook) needs to be reconnected');
    expect(smtp.received[0].parsed.text).toContain('Re-enter its credentials');

    // Recovery: a person enables it again; the receiver accepts; a post succeeds.
    receiver.reset();
    receiver.respondWith(200);
    await updateAccount(t, ws, account.id, { status: 'active' });
    await createPost(t, ws.auth, { text: 'back to normal', targets: [{ accountId: account.id }] });
    await receiver.waitFor(1, 30_000);

    // A second incident: a second alert.
    receiver.respondWith(401);
    for (let i = 0; i < 3; i++) await createPost(t, ws.auth, { text: `again ${i}`, targets: [{ accountId: account.id }] });
    await smtp.waitFor(2, 30_000);
    await quiet(t, account.id);
    expect(smtp.received).toHaveLength(2);
    expect((await events(t, account.id)).map((e) => [e.kind, e.outcome])).toEqual([
      ['needs_reauth', 'queued'],
      ['needs_reauth', 'queued'],
    ]);
    expect(await t.get(MetricsService).metrics()).toMatch(/herald_mails_sent_total\{kind="alert"\} 2\n/);
  }, 90_000);
});

describe('alert events written by the accounts trigger', () => {
  let smtp: MailCatcher;
  let ws: MediumWorkspace;
  let db: Client;

  beforeAll(async () => {
    smtp = await startMailCatcher();
  });
  // Disable threshold 10: the early warning comes at 5 failures in a row.
  const t = useMedium({
    modules: [NotificationsModule],
    config: () => ({ ...mailConfig(smtp.url), circuit: { failureThreshold: 3, cooldownMs: 30_000, disableThreshold: 10 } }),
  });
  beforeAll(async () => {
    ws = await t.workspace('Acme');
    await saveNotificationSettings(t, ws, { digest: { recipients: ['oncall@example.com'] } });
    db = new Client({ connectionString: t.databaseUrl });
    await db.connect();
  });
  afterAll(async () => {
    await db.end();
    await t.close();
    await smtp.close();
  });
  beforeEach(async () => {
    await deliver(); // what an earlier test left pending goes out before this one starts counting
    smtp.received.length = 0;
  });

  /** What the queue's round writes after a failed or successful attempt (account-state.repository.ts applyFeedback). */
  const fail = (id: string, n: number) =>
    db.query(`UPDATE accounts SET consecutive_failures = $2, last_error = 'HTTP 503' WHERE id = $1`, [id, n]);
  const succeed = (id: string) => db.query(`UPDATE accounts SET consecutive_failures = 0, last_success_at = now() WHERE id = $1`, [id]);
  const deliver = async () => {
    await tick(t, new Date());
    await drainMail(t);
  };

  it('hands the trigger the disable threshold of the running configuration', async () => {
    const { rows } = await db.query(`SELECT disable_threshold FROM alert_thresholds`);
    expect(rows).toEqual([{ disable_threshold: 10 }]);
  });

  it('warns once when an account reaches half the disable threshold, and again only after a success re-armed it', async () => {
    const id = await insertAccount(t.databaseUrl, ws.id, 'webhook', 'Shop hook');
    for (let n = 1; n <= 9; n++) await fail(id, n);
    await deliver();
    expect(smtp.received.map((m) => m.parsed.subject)).toEqual(['Herald: "Shop hook" (webhook) has failed 5 times in a row']);
    expect(smtp.received[0].parsed.text).toContain('At 10 failures in a row it disables the account');

    await succeed(id);
    for (let n = 1; n <= 4; n++) await fail(id, n);
    await deliver();
    expect(smtp.received).toHaveLength(1);
    await fail(id, 5);
    await fail(id, 6);
    await deliver();
    expect(smtp.received).toHaveLength(2);
    expect((await events(t, id)).map((e) => [e.kind, e.n])).toEqual([
      ['failure_warning', 5],
      ['failure_warning', 5],
    ]);
  });

  it('counts a round that jumps past the warning level in one step as reaching it', async () => {
    const id = await insertAccount(t.databaseUrl, ws.id, 'webhook', 'Batch hook');
    await fail(id, 3);
    await fail(id, 7);
    expect((await events(t, id)).map((e) => [e.kind, e.n])).toEqual([['failure_warning', 7]]);
  });

  it('alerts when the circuit breaker disables an account, not when a person does', async () => {
    const auto = await insertAccount(t.databaseUrl, ws.id, 'webhook', 'Flaky hook');
    for (let n = 1; n <= 9; n++) await fail(auto, n);
    // The queue disables it in the round that counts the 10th failure (one UPDATE).
    await db.query(
      `UPDATE accounts SET consecutive_failures = 10, status = 'disabled', status_reason = 'disabled automatically after 10 consecutive failed attempts' WHERE id = $1`,
      [auto],
    );
    const manual = await webhookAccount(t, ws.auth, 'http://127.0.0.1:9/hook', { name: 'Paused by hand' });
    await updateAccount(t, ws, manual.id, { status: 'disabled' });
    await deliver();
    // The warning recorded at 5 failures is moot once the account is disabled: one alert for the incident.
    expect(smtp.received.map((m) => m.parsed.subject)).toEqual([
      'Herald: "Flaky hook" (webhook) was disabled after 10 failed attempts in a row',
    ]);
    expect((await events(t, auto)).map((e) => [e.kind, e.outcome])).toEqual([
      ['failure_warning', 'resolved'],
      ['disabled', 'queued'],
    ]);
    expect(await events(t, manual.id)).toEqual([]);
  });

  it('writes the alert in the transaction of the state change: rolled back together', async () => {
    const id = await insertAccount(t.databaseUrl, ws.id, 'webhook', 'Rolled back');
    await db.query('BEGIN');
    await db.query(`UPDATE accounts SET status = 'needs_reauth' WHERE id = $1`, [id]);
    expect(await events(t, id)).toEqual([]); // not visible before the commit
    await db.query('ROLLBACK');
    expect(await events(t, id)).toEqual([]);
    await db.query(`UPDATE accounts SET status = 'needs_reauth', status_reason = 'HTTP 401' WHERE id = $1`, [id]);
    await db.query(`UPDATE accounts SET status = 'needs_reauth', updated_at = now() WHERE id = $1`, [id]);
    expect((await events(t, id)).map((e) => e.kind)).toEqual(['needs_reauth']);
  });

  it('sends nothing about an incident fixed before the notifier got to it, and records why', async () => {
    const id = await insertAccount(t.databaseUrl, ws.id, 'webhook', 'Fixed fast');
    await db.query(`UPDATE accounts SET status = 'needs_reauth' WHERE id = $1`, [id]);
    await db.query(`UPDATE accounts SET status = 'active' WHERE id = $1`, [id]);
    await deliver();
    expect(smtp.received).toHaveLength(0);
    expect(await events(t, id)).toEqual([{ kind: 'needs_reauth', n: 0, outcome: 'resolved' }]);
  });

  it('records events of a workspace without recipients, or with alerts off, without sending anything', async () => {
    const silent = await t.workspace('No recipients');
    const off = await t.workspace('Alerts off');
    await saveNotificationSettings(t, off, { digest: { recipients: ['x@example.com'] }, alerts: { enabled: false } });
    const a = await insertAccount(t.databaseUrl, silent.id, 'webhook', 'A');
    const b = await insertAccount(t.databaseUrl, off.id, 'webhook', 'B');
    await db.query(`UPDATE accounts SET status = 'needs_reauth' WHERE id = ANY($1::uuid[])`, [[a, b]]);
    await deliver();
    expect(smtp.received).toHaveLength(0);
    expect((await events(t, a)).map((e) => e.outcome)).toEqual(['no_recipients']);
    expect((await events(t, b)).map((e) => e.outcome)).toEqual(['alerts_off']);
  });

  it('warns once about a LinkedIn token that cannot be refreshed and expires within 7 days; a new token gets its own warning', async () => {
    const id = await insertAccount(t.databaseUrl, ws.id, 'linkedin', 'Company page');
    const setToken = (expires: Date, hasRefreshToken: boolean) =>
      db.query(`UPDATE accounts SET config = $2 WHERE id = $1`, [
        id,
        { authorUrn: 'urn:li:organization:1', tokenExpiresAt: expires.toISOString(), hasRefreshToken },
      ]);
    await setToken(new Date(Date.now() + 20 * 86_400_000), false);
    await deliver();
    expect(smtp.received).toHaveLength(0); // 20 days away: not yet

    await setToken(new Date(Date.now() + 5 * 86_400_000), false);
    await deliver();
    await deliver();
    expect(smtp.received.map((m) => m.parsed.subject)).toEqual([
      expect.stringMatching(/^Herald: the access token of "Company page" \(LinkedIn\) expires on /),
    ]);

    await setToken(new Date(Date.now() + 3 * 86_400_000), true); // refreshable: nothing to say
    await deliver();
    await setToken(new Date(Date.now() + 6 * 86_400_000), false); // reconnected, another self-serve token
    await deliver();
    expect(smtp.received).toHaveLength(2);
  });

  it("keeps one workspace's alerts away from another's recipients", async () => {
    const other = await t.workspace('Other team');
    await saveNotificationSettings(t, other, { digest: { recipients: ['other@example.com'] } });
    const id = await insertAccount(t.databaseUrl, other.id, 'webhook', randomUUID());
    await db.query(`UPDATE accounts SET status = 'needs_reauth' WHERE id = $1`, [id]);
    await deliver();
    expect(smtp.received.map((m) => m.to)).toEqual([['other@example.com']]);
  });
});
