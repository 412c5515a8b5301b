import { Inject, Injectable } from '@nestjs/common';
import type { AuthContext } from '../access/auth-context';
import { AuditService } from '../audit/audit.service';
import { diffFields } from '../audit/audit.types';
import { invalidInput } from '../common/errors';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { DigestService } from '../digest/digest.service';
import { isTimeZone } from '../common/zoned-time';
import type { DigestSettingsSource } from '../digest/digest.types';
import { MailOutbox } from '../mail/mail-outbox.service';
import { excerpt } from '../mail/mail-format';
import { recipientProblem } from './recipient-address';
import type { DigestPreviewView, NotificationSettingsView, UpdateNotificationSettingsDto } from './notification-settings.dto';
import { AccountReportsService } from '../accounts/account-reports.service';
import type { Sql } from '../database/db';
import { AccountEventsRepository } from './account-events.repository';
import { ALERTS_PER_ACCOUNT_PER_DAY, ALERTS_PER_WORKSPACE_PER_DAY, dayBefore } from './mail-limits';
import { NotificationSettings, NotificationSettingsRepository } from './notification-settings.repository';
import { RecipientsService } from './recipients.service';

/**
 * A workspace's notification settings (`GET|PUT /v1/settings/notifications`, docs/notifications.md) and the
 * digest preview (`POST /v1/digest/preview`). The API and the settings page both call this.
 */
@Injectable()
export class NotificationSettingsService {
  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly settings: NotificationSettingsRepository,
    private readonly outbox: MailOutbox,
    private readonly digest: DigestService,
    private readonly audit: AuditService,
    private readonly recipients: RecipientsService,
    private readonly alerts: AccountEventsRepository,
    private readonly accounts: AccountReportsService,
  ) {
    // The digest sees the confirmed recipients only: with none, no digest is due (it waits, and
    // then covers the whole time since the previous one).
    this.digestSettings = {
      enabled: async () => Promise.all((await settings.digestEnabled()).map((s) => this.confirmedOnly(s))),
      get: async (workspaceId, runner) => this.confirmedOnly(await settings.get(workspaceId, runner), runner),
    };
  }

  /** The digest's settings, as the digest reads them (DigestService.sweep and preview). */
  readonly digestSettings: DigestSettingsSource;

  private async confirmedOnly(s: NotificationSettings, runner?: Sql): Promise<NotificationSettings> {
    return { ...s, recipients: await this.recipients.confirmedOf(s.workspaceId, s.recipients, runner) };
  }

  async get(workspaceId: string): Promise<NotificationSettingsView> {
    return this.view(await this.settings.get(workspaceId));
  }

  /**
   * Saves the fields given (absent ones keep their value). Invalid input is a 400 naming the
   * field, and nothing is saved. Recipients are kept as written, each at most once (compared
   * without regard to case).
   */
  async update(auth: AuthContext, dto: UpdateNotificationSettingsDto): Promise<NotificationSettingsView> {
    const workspaceId = auth.workspaceId;
    const current = await this.settings.get(workspaceId);
    const d = dto.digest ?? {};
    const next = {
      workspaceId,
      digestEnabled: d.enabled ?? current.digestEnabled,
      // null keeps the list, like the other fields (@IsOptional lets null through as absent).
      recipients: d.recipients != null ? checkRecipients(d.recipients) : current.recipients,
      hour: d.hour ?? current.hour,
      timezone: d.timezone !== undefined ? checkTimeZone(d.timezone) : current.timezone,
      sendWhenEmpty: d.sendWhenEmpty ?? current.sendWhenEmpty,
      alertsEnabled: dto.alerts?.enabled ?? current.alertsEnabled,
    };
    if (next.digestEnabled && next.recipients.length === 0) {
      throw invalidInput('digest.recipients must list at least one address while digest.enabled is true');
    }
    // The list and its confirmation rows change together; new addresses get their link at once.
    const saved = await this.recipients.transaction(async (tx) => {
      const row = await this.settings.save(next, tx);
      await this.recipients.sync(tx, workspaceId, row.recipients);
      return row;
    });
    await this.recipients.sendDue(workspaceId);
    const changes = diffFields(notificationFields(current), notificationFields(saved));
    if (Object.keys(changes.after).length > 0) {
      await this.audit.record(null, auth, {
        kind: 'notifications',
        action: 'update',
        summary: `Changed the notification settings (${Object.keys(changes.after).join(', ')})`,
        ...changes,
      });
    }
    return this.view(saved);
  }

  async preview(workspaceId: string, now: Date = new Date()): Promise<DigestPreviewView> {
    const p = await this.digest.preview(workspaceId, now, this.digestSettings);
    return {
      subject: p.message.subject,
      html: p.message.html,
      text: p.message.text,
      empty: p.message.empty,
      wouldSend: p.wouldSend,
      recipients: p.recipients,
      window: { start: p.window.start.toISOString(), end: p.window.end.toISOString() },
      counts: p.message.counts,
    };
  }

  private async view(s: NotificationSettings, now = new Date()): Promise<NotificationSettingsView> {
    const last = await this.digest.last(s.workspaceId);
    const mail = last?.mailId ? await this.outbox.state(last.mailId) : null;
    const states = await this.recipients.states(s.workspaceId, s.recipients, now);
    const capped = await this.alerts.cappedSince(s.workspaceId, dayBefore(now));
    return {
      digest: { enabled: s.digestEnabled, recipients: s.recipients, hour: s.hour, timezone: s.timezone, sendWhenEmpty: s.sendWhenEmpty },
      alerts: { enabled: s.alertsEnabled },
      recipientStatus: states.map((r) => ({
        address: r.address,
        status: r.status,
        confirmationSentAt: r.confirmationSentAt?.toISOString() ?? null,
        linkExpiresAt: r.linkExpiresAt?.toISOString() ?? null,
      })),
      alertLimits: {
        perAccountPerDay: ALERTS_PER_ACCOUNT_PER_DAY,
        perWorkspacePerDay: ALERTS_PER_WORKSPACE_PER_DAY,
        heldLastDay: await Promise.all(
          capped.map(async (c) => ({
            accountId: c.accountId,
            accountName: (await this.accounts.find(c.accountId))?.name ?? null,
            reached: c.reached,
            count: c.count,
            lastAt: c.lastAt.toISOString(),
          })),
        ),
      },
      delivery: this.config.smtpUrl ? 'smtp' : 'outbox',
      lastDigest: last && {
        localDate: last.localDate,
        windowStart: last.windowStart.toISOString(),
        windowEnd: last.windowEnd.toISOString(),
        outcome: last.outcome,
        mail: mail && {
          status: mail.status,
          attempts: mail.attempts,
          sentAt: mail.sentAt?.toISOString() ?? null,
          lastError: mail.lastError,
        },
      },
    };
  }
}

function checkRecipients(list: string[]): string[] {
  const seen = new Set<string>();
  return list.map((raw, i) => {
    const address = raw.trim();
    // A plain address only (recipient-address.ts): no display name ("Ann <a@x.org>"), no quotes,
    // backslashes, spaces or control characters, so it can neither carry a second recipient nor
    // break out of the To: header.
    const problem = recipientProblem(address);
    if (problem) throw invalidInput(`digest.recipients.${i} "${excerpt(address, 80)}" ${problem}`);
    const key = address.toLowerCase();
    if (seen.has(key)) throw invalidInput(`digest.recipients.${i} "${excerpt(address, 80)}" is listed twice`);
    seen.add(key);
    return address;
  });
}

function checkTimeZone(name: string): string {
  const zone = name.trim();
  if (!isTimeZone(zone)) {
    throw invalidInput(`digest.timezone "${excerpt(zone, 64)}" is not an IANA time zone name (e.g. Europe/Paris, America/New_York, UTC)`);
  }
  return zone;
}

function notificationFields(s: NotificationSettings): Record<string, unknown> {
  return {
    digestEnabled: s.digestEnabled,
    recipients: s.recipients,
    hour: s.hour,
    timezone: s.timezone,
    sendWhenEmpty: s.sendWhenEmpty,
    alertsEnabled: s.alertsEnabled,
  };
}
