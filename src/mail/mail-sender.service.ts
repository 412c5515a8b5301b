import { Inject, Injectable, Logger } from '@nestjs/common';
import { SecretBox, SecretDecryptionError } from '../common/crypto/secret-box';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { fullJitterDelayMs } from '../retry/backoff';
import { MAIL_DRIVER, MailDriver, MailSendError } from './mail-driver';
import { ClaimedMail, MailOutboxRepository } from './mail-outbox.repository';
import { openBody } from './mail-seal';
import { MailMetrics } from './mail.metrics';

/** Mails leased per pass; they are sent concurrently, each on its own connection. */
const BATCH = 10;

/**
 * Sends what mail_outbox holds: leases due mails, hands each to the driver, records the
 * outcome. A mail counts as sent only once the server accepted it. A 4xx answer or a network
 * error is tried again after a full-jitter backoff (MAIL_RETRY_BASE_DELAY_MS doubling up to
 * MAIL_RETRY_MAX_DELAY_MS), a 5xx answer or the last of MAIL_MAX_ATTEMPTS tries fails it for
 * good; either way the outcome is on the row. A mail with a one-use link is opened here, at
 * sending time (mail-seal.ts), and its body leaves the row with the outcome that ends it.
 */
@Injectable()
export class MailSender {
  private readonly logger = new Logger('Mail');

  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    @Inject(MAIL_DRIVER) private readonly driver: MailDriver,
    private readonly outbox: MailOutboxRepository,
    private readonly metrics: MailMetrics,
    private readonly box: SecretBox,
  ) {}

  /** Where mail goes, for the start-up log line: never the SMTP URL (it may hold a password). */
  get driverName(): string {
    return this.driver.name;
  }

  /**
   * One pass: gives up mails whose every try was lost with its sender, then sends the due ones
   * (at most BATCH). Returns how many were accepted.
   */
  async deliverDue(random: () => number = Math.random): Promise<number> {
    const { maxAttempts, timeoutMs } = this.config.mail;
    for (const m of await this.outbox.failAbandoned(maxAttempts)) {
      this.metrics.gaveUp(m.kind);
      this.logger.warn(`mail ${m.id} (${m.kind}) failed: its sender stopped before recording the last try`);
    }
    // Longer than one SMTP conversation can last (connect, greeting and idle timeouts), so a
    // live sender never loses its lease to another.
    const leaseMs = 3 * timeoutMs + 10_000;
    const mails = await this.outbox.claimDue(BATCH, leaseMs, maxAttempts);
    const results = await Promise.all(mails.map((m) => this.sendOne(m, random)));
    return results.filter(Boolean).length;
  }

  /** How long until the next mail falls due (a retry, a lease that may lapse); 0: now; null: none waits. */
  nextDueInMs(): Promise<number | null> {
    return this.outbox.nextDueInMs();
  }

  private async sendOne(mail: ClaimedMail, random: () => number): Promise<boolean> {
    try {
      const { html, text } = openBody(this.box, mail.id, mail.kind, mail);
      const accepted = await this.driver.send({
        id: mail.id,
        kind: mail.kind,
        from: this.config.mailFrom,
        to: mail.recipients,
        subject: mail.subject,
        html,
        text,
        createdAt: mail.createdAt,
      });
      if (await this.outbox.markSent(mail.id, mail.attempt, accepted.response, accepted.rejected)) {
        this.metrics.sent.inc({ kind: mail.kind });
      }
      if (accepted.rejected.length > 0) {
        this.logger.warn(`mail ${mail.id} (${mail.kind}) was accepted, but not for ${accepted.rejected.length} of its recipients`);
      }
      return true;
    } catch (err) {
      const failure = err instanceof MailSendError ? err : sendFailureOf(err);
      const retry = failure.retryable && mail.attempt < this.config.mail.maxAttempts;
      const delayMs = retry
        ? fullJitterDelayMs(
            mail.attempt,
            { baseDelayMs: this.config.mail.retryBaseDelayMs, maxDelayMs: this.config.mail.retryMaxDelayMs },
            random,
          )
        : null;
      await this.outbox.markFailedTry(mail.id, mail.attempt, failure.message, delayMs);
      this.metrics.failed.inc({ kind: mail.kind, outcome: retry ? 'retry' : 'gave_up' });
      this.logger.warn(
        `mail ${mail.id} (${mail.kind}), try ${mail.attempt}: ${failure.message}${retry ? `; trying again in ${Math.ceil((delayMs ?? 0) / 1000)} s` : '; giving up'}`,
      );
      return false;
    }
  }
}

/**
 * A failure outside the driver: a body sealed with another HERALD_SECRET_KEY will not open on a
 * later try either (its link is lost; the person asks for a new one); anything else may pass.
 */
function sendFailureOf(err: unknown): MailSendError {
  if (err instanceof SecretDecryptionError) {
    return new MailSendError(
      'its sealed body does not open with this HERALD_SECRET_KEY (the link in it is lost: ask for a new one)',
      false,
    );
  }
  return new MailSendError(err instanceof Error ? err.message : String(err), true);
}
