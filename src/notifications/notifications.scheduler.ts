import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Cron, SchedulerRegistry } from '@nestjs/schedule';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { DigestService } from '../digest/digest.service';
import { MailSender } from '../mail/mail-sender.service';
import { AlertsService } from './alerts.service';
import { NotificationSettingsService } from './notification-settings.service';
import { RecipientsService } from './recipients.service';

const POLL = 'herald-notifications-poll';

/**
 * When notification work runs in this process (NOTIFICATIONS_ENABLED, default on):
 * - every minute, at second 0 UTC, the digest sweep (one UTC schedule for every workspace,
 *   whatever its time zone: each tick asks which local days are due; see dueLocalDate) and the
 *   scan of expiring LinkedIn tokens;
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
  }

  @Cron('0 * * * * *', { name: 'herald-digest-sweep', timeZone: 'UTC' })
  async minute(): Promise<void> {
    if (!this.config.notifications.enabled) return;
    await this.pass('sweep', (now) => this.sweep(now));
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
    await this.running;
  }
}
