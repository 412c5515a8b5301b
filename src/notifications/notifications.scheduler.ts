import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { DigestService } from '../digest/digest.service';
import { MailSender } from '../mail/mail-sender.service';
import { AlertsService } from './alerts.service';
import { NotificationSettingsService } from './notification-settings.service';
import { RecipientsService } from './recipients.service';
import { nextSweepAt } from './sweep-plan';

const POLL = 'herald-notifications-poll';
const SWEEP = 'herald-digest-sweep';

/**
 * When notification work runs in this process (NOTIFICATIONS_ENABLED, default on):
 * - every NOTIFICATIONS_SWEEP_INTERVAL_SECONDS (60: at second 0 of every minute, UTC), the digest
 *   sweep (one UTC schedule for every workspace, whatever its time zone: each tick asks which
 *   local days are due; see dueLocalDate) and the scan of expiring LinkedIn tokens. A sweep more
 *   often changes nothing but how soon a due digest goes: the digest is claimed once per local
 *   day. Tests that wait for a digest through a service process set it to a few seconds;
 * - every NOTIFICATIONS_POLL_INTERVAL_MS (2 s): pending account events become alert mails, and
 *   due mails are sent.
 * Every process may run it: the database decides who does what (the digest claim, SKIP LOCKED on
 * events and mails). A pass never overlaps itself in one process; shutdown waits for the one
 * running.
 */
@Injectable()
export class NotificationsScheduler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Notifications');
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly registry: SchedulerRegistry,
    private readonly digest: DigestService,
    private readonly alerts: AlertsService,
    private readonly mail: MailSender,
    private readonly settings: NotificationSettingsService,
    private readonly recipients: RecipientsService,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.notifications.enabled) return;
    this.logger.log(
      `mail goes ${this.mail.driverName === 'smtp' ? 'to the SMTP server of SMTP_URL' : `to .eml files in ${this.config.dataDir}/outbox/ (SMTP_URL is not set)`}`,
    );
    const timer = setInterval(() => void this.pass('poll', (now) => this.poll(now)), this.config.notifications.pollIntervalMs);
    timer.unref();
    this.registry.addInterval(POLL, timer);
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
        void this.pass('sweep', (now) => this.sweep(now));
      },
      Math.max(0, at - Date.now()),
    );
    timer.unref();
    this.registry.addTimeout(SWEEP, timer);
  }

  /** The minute's work; also what tests drive with a clock of their own. */
  async sweep(now: Date): Promise<void> {
    await this.alerts.scanTokens(now);
    const { claimed } = await this.digest.sweep(now, this.settings.digestSettings);
    if (claimed.length > 0)
      this.logger.log(`digests made: ${claimed.map((c) => `${c.workspaceId} ${c.localDate} (${c.outcome})`).join(', ')}`);
    await this.poll(now);
  }

  /** Recipient confirmations due, alerts out of the event outbox, then whatever mail is due. */
  async poll(now: Date): Promise<void> {
    await this.recipients.sendAllDue(now);
    await this.alerts.processPending(now);
    await this.mail.deliverDue();
  }

  /** Runs `work` unless a pass is running (the next tick catches up); errors are logged, never thrown into the timer. */
  private async pass(name: string, work: (now: Date) => Promise<void>): Promise<void> {
    if (this.stopped || this.running) return;
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
    if (this.registry.doesExist('interval', POLL)) this.registry.deleteInterval(POLL);
    if (this.registry.doesExist('timeout', SWEEP)) this.registry.deleteTimeout(SWEEP);
    await this.running;
  }
}
