import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { SelfTimed } from '../common/background';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { ListenConnection } from '../database/listen-connection';
import { DigestService } from '../digest/digest.service';
import { MailSender } from '../mail/mail-sender.service';
import { AlertsService } from './alerts.service';
import { NotificationSettingsService } from './notification-settings.service';
import { RecipientsService } from './recipients.service';
import { nextPollMs, nextSweepAt } from './sweep-plan';

const SWEEP = 'herald-digest-sweep';
/**
 * NOTIFY on this channel: something landed in one of the notifier's inboxes (account_events,
 * mail_outbox, notification_recipients). Sent by triggers on those tables, at commit
 * (migrations/1766000000000-notification-wakeups.ts).
 */
export const NOTIFICATIONS_CHANNEL = 'herald_notifications';

/**
 * When notification work runs in this process (NOTIFICATIONS_ENABLED, default on):
 * - every NOTIFICATIONS_SWEEP_INTERVAL_SECONDS (60: at second 0 of every minute, UTC), the digest
 *   sweep (one UTC schedule for every workspace, whatever its time zone: each tick asks which
 *   local days are due; see dueLocalDate), the scan of expiring LinkedIn tokens, and a pass over
 *   the inboxes (below), which is also the safety net for a NOTIFY missed. A sweep more often
 *   changes nothing but how soon a due digest goes: the digest is claimed once per local day.
 *   Tests that wait for a digest through a service process set it to a few seconds;
 * - a pass over the inboxes (confirmation mails due, pending account events become alert mails,
 *   due mails are sent) when a NOTIFY says something arrived (LISTEN herald_notifications), and
 *   when the next mail falls due (a retry, a lapsed lease: read after each pass); while the
 *   LISTEN connection is down, every NOTIFICATIONS_POLL_INTERVAL_MS (2 s) instead. An idle
 *   notifier does one sweep a minute and nothing else.
 * Every process may run it: the database decides who does what (the digest claim, SKIP LOCKED on
 * events and mails). One pass at a time per process (a wake-up during a pass runs another after
 * it); shutdown waits for the one running.
 */
@Injectable()
export class NotificationsScheduler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Notifications');
  private running: Promise<void> | null = null;
  private stopped = false;
  private listen: ListenConnection | null = null;
  private listening: Promise<void> | null = null;
  private readonly inbox: SelfTimed;

  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly registry: SchedulerRegistry,
    private readonly digest: DigestService,
    private readonly alerts: AlertsService,
    private readonly mail: MailSender,
    private readonly settings: NotificationSettingsService,
    private readonly recipients: RecipientsService,
  ) {
    this.inbox = new SelfTimed(
      () => this.inboxPass(),
      (err) => this.logger.error(`poll failed: ${String(err)}`),
      config.notifications.pollIntervalMs,
    );
  }

  onApplicationBootstrap(): void {
    if (!this.config.notifications.enabled) return;
    this.logger.log(
      `mail goes ${this.mail.driverName === 'smtp' ? 'to the SMTP server of SMTP_URL' : `to .eml files in ${this.config.dataDir}/outbox/ (SMTP_URL is not set)`}`,
    );
    this.listen = new ListenConnection({
      // LISTEN needs a session of its own: behind a transaction pooler, the direct URL.
      url: this.config.databaseDirectUrl ?? this.config.databaseUrl,
      role: 'notifier',
      channels: [NOTIFICATIONS_CHANNEL],
      notified: () => this.inbox.within(0),
      // Subscribed (again): catch up on what arrived while not listening.
      listening: () => this.inbox.within(0),
      logger: this.logger,
    });
    this.listening = this.listen.start();
    this.inbox.start();
    const intervalMs = this.config.notifications.sweepIntervalSeconds * 1000;
    this.planSweep(nextSweepAt(Math.floor(Date.now() / intervalMs) * intervalMs, intervalMs, Date.now()), intervalMs);
  }

  /** One timer at a time, planned from the last plan (nextSweepAt), registered so shutdown finds it. */
  private planSweep(at: number, intervalMs: number): void {
    if (this.stopped) return;
    const timer = setTimeout(
      () => {
        this.registry.deleteTimeout(SWEEP);
        this.planSweep(nextSweepAt(at, intervalMs, Date.now()), intervalMs);
        // Then a pass over the inboxes, which plans the next one (the safety net for a NOTIFY lost).
        void this.pass('sweep', (now) => this.sweepDigestsAndTokens(now)).then(() => this.inbox.within(0));
      },
      Math.max(0, at - Date.now()),
    );
    timer.unref();
    this.registry.addTimeout(SWEEP, timer);
  }

  /** The minute's work, a pass over the inboxes included; what tests drive with a clock of their own. */
  async sweep(now: Date): Promise<void> {
    await this.sweepDigestsAndTokens(now);
    await this.poll(now);
  }

  private async sweepDigestsAndTokens(now: Date): Promise<void> {
    await this.alerts.scanTokens(now);
    const { claimed } = await this.digest.sweep(now, this.settings.digestSettings);
    if (claimed.length > 0)
      this.logger.log(`digests made: ${claimed.map((c) => `${c.workspaceId} ${c.localDate} (${c.outcome})`).join(', ')}`);
  }

  /** Recipient confirmations due, alerts out of the event outbox, then whatever mail is due. */
  async poll(now: Date): Promise<void> {
    await this.recipients.sendAllDue(now);
    await this.alerts.processPending(now);
    await this.mail.deliverDue();
  }

  /** A pass over the inboxes, woken or timed; resolves to the delay until the next one (sweep-plan.ts). */
  private async inboxPass(): Promise<number> {
    const { pollIntervalMs } = this.config.notifications;
    if (this.stopped) return pollIntervalMs;
    await this.pass('poll', (now) => this.poll(now));
    const nextMailMs = await this.mail.nextDueInMs().catch(() => 0);
    return nextPollMs(this.listen?.state === 'listening', nextMailMs, pollIntervalMs);
  }

  /** Runs `work` after the pass in progress, if any; errors are logged, never thrown into the timer. */
  private async pass(name: string, work: (now: Date) => Promise<void>): Promise<void> {
    while (this.running) await this.running;
    if (this.stopped) return;
    const run = work(new Date())
      .catch((err: unknown) => this.logger.error(`${name} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`))
      .finally(() => {
        this.running = null;
      });
    this.running = run;
    await run;
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.registry.doesExist('timeout', SWEEP)) this.registry.deleteTimeout(SWEEP);
    await this.inbox.stop();
    await this.listen?.stop();
    await this.listening;
    await this.running;
  }
}
