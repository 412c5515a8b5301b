import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { AccountReportsService } from '../accounts/account-reports.service';
import type { AccountHealthRow } from '../accounts/account.types';
import { TOKEN_EXPIRY_WARNING_MS } from '../accounts/account-warnings';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import type { Sql } from '../database/db';
import { JobReportsService } from '../jobs/job-reports.service';
import { MailOutbox } from '../mail/mail-outbox.service';
import { WorkspacesService } from '../workspaces/workspaces.service';
import { AccountEventRow, AccountEventsRepository, EventOutcome } from './account-events.repository';
import { renderAlert } from './alert-builder';
import { alertCapDecision, dayBefore } from './mail-limits';
import { NotificationSettingsRepository } from './notification-settings.repository';
import { RecipientsService } from './recipients.service';

/** Events turned into mails per transaction. */
const BATCH = 20;

/**
 * Whether the state an event reported still holds. An alert about something a person already
 * fixed (the account was reconnected, enabled, or a success reset the count before the notifier
 * got to the event) says nothing worth a mail.
 */
export function stillRelevant(
  event: Pick<AccountEventRow, 'kind' | 'disableThreshold' | 'tokenExpiresAt'>,
  account: AccountHealthRow | null,
): boolean {
  if (!account || account.deleted) return false;
  switch (event.kind) {
    case 'needs_reauth':
      return account.status === 'needs_reauth';
    case 'disabled':
      return account.status === 'disabled';
    case 'failure_warning': {
      const warnAt = Math.ceil((event.disableThreshold ?? 1) / 2);
      return account.status === 'active' && account.consecutiveFailures >= warnAt;
    }
    case 'token_expiring': {
      const current = typeof account.config.tokenExpiresAt === 'string' ? Date.parse(account.config.tokenExpiresAt) : NaN;
      return account.status === 'active' && account.config.hasRefreshToken !== true && current === event.tokenExpiresAt?.getTime();
    }
  }
}

/**
 * Alerts (docs/notifications.md): account events become mails at once, one per incident, to the
 * confirmed recipients only, and at most ALERTS_PER_ACCOUNT_PER_DAY per account and
 * ALERTS_PER_WORKSPACE_PER_DAY per workspace in any 24 hours (mail-limits.ts; beyond, the event
 * is recorded as capped and the settings show it). The events come
 * from the outbox table filled by a trigger on accounts (needs re-authentication, disabled by
 * the circuit breaker, the early warning at half the disable threshold) and from the token scan
 * below (a LinkedIn token that cannot be refreshed, 7 days before it expires).
 */
@Injectable()
export class AlertsService implements OnModuleInit {
  private readonly logger = new Logger('Alerts');

  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly events: AccountEventsRepository,
    private readonly settings: NotificationSettingsRepository,
    private readonly accounts: AccountReportsService,
    private readonly jobs: JobReportsService,
    private readonly workspaces: WorkspacesService,
    private readonly outbox: MailOutbox,
    private readonly recipients: RecipientsService,
  ) {}

  /** The trigger reads the disable threshold from the database: give it this process's setting. */
  async onModuleInit(): Promise<void> {
    await this.events.setDisableThreshold(this.config.circuit.disableThreshold);
  }

  /**
   * Turns pending events into mails, BATCH per transaction, until none is left. Each event's
   * mail (or the reason it gets none) and its "processed" mark commit together.
   */
  async processPending(now = new Date()): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.events.transaction(async (tx) => {
        const batch = await this.events.claimPending(tx, BATCH);
        for (const event of batch) {
          const { outcome, mailId } = await this.handle(tx, event, now);
          await this.events.markProcessed(tx, event.id, outcome, mailId);
        }
        return batch.length;
      });
      total += n;
      if (n < BATCH) return total;
    }
  }

  private async handle(tx: Sql, event: AccountEventRow, now: Date): Promise<{ outcome: EventOutcome; mailId: string | null }> {
    const settings = await this.settings.get(event.workspaceId, tx);
    if (!settings.alertsEnabled) return { outcome: 'alerts_off', mailId: null };
    // Only addresses that confirmed through the mailed link get alerts.
    const recipients = await this.recipients.confirmedOf(event.workspaceId, settings.recipients, tx);
    if (recipients.length === 0) return { outcome: 'no_recipients', mailId: null };
    const account = await this.accounts.find(event.accountId, tx);
    if (!account || !stillRelevant(event, account)) return { outcome: 'resolved', mailId: null };
    // The daily limits, counted and used under the workspace's lock (two notifiers share them).
    await this.events.lockWorkspace(tx, event.workspaceId);
    const cap = alertCapDecision(await this.events.mailedSince(tx, event.workspaceId, event.accountId, dayBefore(now)));
    if (!cap.send) return { outcome: cap.reached === 'account' ? 'capped_account' : 'capped_workspace', mailId: null };
    const waitingJobs = await this.jobs.waiting(event.accountId, tx);
    const workspace = await this.workspaces.find(event.workspaceId);
    const mail = renderAlert(
      {
        kind: event.kind,
        account: { id: account.id, name: account.name, provider: account.provider },
        detail: event.detail,
        consecutiveFailures: event.consecutiveFailures,
        disableThreshold: event.disableThreshold,
        tokenExpiresAt: event.tokenExpiresAt,
        at: event.createdAt,
        waitingJobs,
      },
      { publicUrl: this.config.publicUrl, timeZone: settings.timezone, workspaceName: workspace?.name ?? 'your workspace' },
    );
    const mailId = await this.outbox.enqueue(tx, {
      workspaceId: event.workspaceId,
      kind: 'alert',
      recipients,
      ...mail,
    });
    return { outcome: 'queued', mailId };
  }

  /**
   * LinkedIn tokens that cannot be refreshed and expire within 7 days (or already have): one
   * event per account and token, however often this runs (a unique index). Returns how many
   * new warnings were recorded.
   */
  async scanTokens(now: Date): Promise<number> {
    let added = 0;
    for (const t of await this.accounts.unrefreshableTokens()) {
      const expires = new Date(t.tokenExpiresAt);
      if (Number.isNaN(expires.getTime()) || expires.getTime() - now.getTime() > TOKEN_EXPIRY_WARNING_MS) continue;
      if (await this.events.addTokenExpiring(t.id, t.workspaceId, expires)) added++;
    }
    if (added > 0) this.logger.log(`${added} LinkedIn token(s) expire within 7 days: alerts recorded`);
    return added;
  }
}
