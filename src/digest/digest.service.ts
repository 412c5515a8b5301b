import { Inject, Injectable, Logger } from '@nestjs/common';
import { AccountReportsService } from '../accounts/account-reports.service';
import { accountWarnings } from '../accounts/account-warnings';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import type { Sql } from '../database/db';
import { JobReportsService } from '../jobs/job-reports.service';
import { MailOutbox } from '../mail/mail-outbox.service';
import { WorkspacesService } from '../workspaces/workspaces.service';
import { renderDigest } from './digest-builder';
import { DigestWindow, digestWindow, dueLocalDate } from './digest-schedule';
import { DigestRepository } from './digest.repository';
import {
  DigestFacts,
  DigestMessage,
  DigestSettings,
  DigestSettingsSource,
  DigestSummaryRow,
  DIGEST_ITEM_LIMIT,
  DIGEST_TOP_ERRORS,
} from './digest.types';

/** What a digest made now would be, without sending it. */
export interface DigestPreview {
  message: DigestMessage;
  window: DigestWindow;
  /** The digest is on, and the day has something to say (or sendWhenEmpty). */
  wouldSend: boolean;
  recipients: string[];
}

/** What one sweep did. */
export interface SweepResult {
  /** Workspaces whose digest was due and claimed by this process. */
  claimed: { workspaceId: string; localDate: string; outcome: 'queued' | 'empty' }[];
}

/**
 * The daily digest (docs/notifications.md): the sweep that decides which workspaces' day is due, the claim that
 * makes it happen once, and the facts it reports (read through the accounts' and jobs' report
 * services). Its settings come from the notifications module (DigestSettingsSource). The mail itself is written to the mail outbox in the claim's transaction and
 * sent by MailSender.
 */
@Injectable()
export class DigestService {
  private readonly logger = new Logger('Digest');

  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly digests: DigestRepository,
    private readonly accounts: AccountReportsService,
    private readonly jobs: JobReportsService,
    private readonly workspaces: WorkspacesService,
    private readonly outbox: MailOutbox,
  ) {}

  /**
   * One tick of the UTC sweep: for every workspace with the digest on, is a local day due at
   * `now` (dueLocalDate)? If so, claim it and write its mail. Cheap when nothing is due: two
   * reads (the enabled settings, the latest digest of each). A failure in one workspace is
   * logged and does not stop the others; its day stays due and the next tick tries again.
   */
  async sweep(now: Date, settings: DigestSettingsSource): Promise<SweepResult> {
    const enabled = await settings.enabled();
    const latest = await this.digests.latest(enabled.map((s) => s.workspaceId));
    const claimed: SweepResult['claimed'] = [];
    for (const s of enabled) {
      const day = this.dueDay(s, latest.get(s.workspaceId)?.localDate ?? null, now);
      if (day === null) continue;
      try {
        const outcome = await this.claim(s.workspaceId, day, now, settings);
        if (outcome) claimed.push({ workspaceId: s.workspaceId, localDate: day, outcome });
      } catch (err) {
        this.logger.error(
          `digest of workspace ${s.workspaceId} for ${day} failed; the next sweep tries again: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    }
    return { claimed };
  }

  private dueDay(s: DigestSettings, lastDate: string | null, now: Date): string | null {
    if (!s.digestEnabled || s.digestEnabledAt === null) return null;
    return dueLocalDate({ now, timeZone: s.timezone, hour: s.hour, enabledAt: s.digestEnabledAt, lastDate });
  }

  /**
   * Claims the digest of `day` and writes its mail, in one transaction: under the workspace's
   * advisory lock, re-check that the day is still due (another process may have just done it),
   * gather the facts, render, write the mail (unless empty and not wanted), and insert the day's
   * row. If the row exists after all (ON CONFLICT), everything rolls back, mail included; if the
   * process dies halfway, nothing was committed and the next tick does it. Null when another
   * process had it.
   */
  private claim(workspaceId: string, day: string, now: Date, settings: DigestSettingsSource): Promise<'queued' | 'empty' | null> {
    return this.digests
      .transaction(async (tx) => {
        await this.digests.lockWorkspace(tx, workspaceId);
        const s = await settings.get(workspaceId, tx);
        const last = (await this.digests.latest([workspaceId], tx)).get(workspaceId) ?? null;
        if (this.dueDay(s, last?.localDate ?? null, now) !== day) return null;

        const window = digestWindow(now, last?.windowEnd ?? null, s.digestEnabledAt ?? now);
        const message = await this.render(workspaceId, s.timezone, window, tx);
        const send = !message.empty || s.sendWhenEmpty;
        const mailId = send
          ? await this.outbox.enqueue(tx, {
              workspaceId,
              kind: 'digest',
              recipients: s.recipients,
              subject: message.subject,
              html: message.html,
              text: message.text,
            })
          : null;
        const inserted = await this.digests.insert(tx, {
          workspaceId,
          localDate: day,
          timezone: s.timezone,
          hour: s.hour,
          windowStart: window.start,
          windowEnd: window.end,
          outcome: send ? 'queued' : 'empty',
          mailId,
          deadJobs: message.counts.deadJobs,
          failedAttempts: message.counts.failedAttempts,
          accountsAttention: message.counts.accountsNeedingAttention,
        });
        if (!inserted) throw new DigestAlreadyClaimed();
        return send ? 'queued' : 'empty';
      })
      .catch((err: unknown) => {
        if (err instanceof DigestAlreadyClaimed) return null;
        throw err;
      });
  }

  /** The digest a workspace would get if it were made at `now`: nothing is written. */
  async preview(workspaceId: string, now: Date, settings: DigestSettingsSource): Promise<DigestPreview> {
    const s = await settings.get(workspaceId);
    const last = (await this.digests.latest([workspaceId])).get(workspaceId) ?? null;
    const window = digestWindow(now, last?.windowEnd ?? null, s.digestEnabledAt ?? now);
    const message = await this.render(workspaceId, s.timezone, window, undefined);
    return {
      message,
      window,
      wouldSend: s.digestEnabled && (!message.empty || s.sendWhenEmpty),
      recipients: s.recipients,
    };
  }

  /** The workspace's last digest (its settings page shows it). */
  last(workspaceId: string): Promise<DigestSummaryRow | null> {
    return this.digests.last(workspaceId);
  }

  private async render(workspaceId: string, timeZone: string, window: DigestWindow, runner: Sql | undefined): Promise<DigestMessage> {
    const [facts, workspace] = await Promise.all([this.facts(workspaceId, window, runner), this.workspaces.find(workspaceId)]);
    return renderDigest(facts, { publicUrl: this.config.publicUrl, timeZone, workspaceName: workspace?.name ?? 'your workspace' });
  }

  /** Everything the digest reports, for one workspace and window. */
  async facts(workspaceId: string, window: DigestWindow, runner?: Sql): Promise<DigestFacts> {
    // One runner at a time: inside a transaction the statements share its connection.
    const accounts = await this.accounts.live(workspaceId, runner);
    const activity = await this.jobs.activity(workspaceId, window.start, window.end, runner);
    const dead = await this.jobs.dead(workspaceId, window.start, window.end, DIGEST_ITEM_LIMIT, runner);
    const topErrors = await this.jobs.topErrors(workspaceId, window.start, window.end, DIGEST_TOP_ERRORS, runner);
    return {
      window,
      accounts: accounts.map((a) => ({
        id: a.id,
        name: a.name,
        provider: a.provider,
        status: a.status,
        statusReason: a.statusReason,
        warnings: accountWarnings(a.provider, a.config, { now: window.end, linkedInVersion: this.config.linkedin.apiVersion }),
        circuitOpenedAt: a.circuitOpenedAt,
        consecutiveFailures: a.consecutiveFailures,
        lastError: a.lastError,
      })),
      activity,
      deadJobs: dead.items,
      deadTotal: dead.total,
      topErrors,
    };
  }
}

/** The day's row was there after all: roll the transaction (and its mail) back. */
class DigestAlreadyClaimed extends Error {
  constructor() {
    super('the digest of this day was claimed by another process');
  }
}
