import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import type { Sql, Tx } from '../database/db';
import { MailOutbox } from '../mail/mail-outbox.service';
import { WorkspacesService } from '../workspaces/workspaces.service';
import { CONFIRMATION_EVERY_MS, CONFIRMATION_TTL_MS, confirmationBudget, confirmationMail, dayBefore } from './mail-limits';
import { NotificationRecipientsRepository } from './notification-recipients.repository';

/** Where one recipient of the list stands, for the API and the page. */
export interface RecipientState {
  address: string;
  /** confirmed: gets digests and alerts; pending: a link was mailed; waiting: no link mailed yet (a daily limit). */
  status: 'confirmed' | 'pending' | 'waiting';
  confirmationSentAt: Date | null;
  linkExpiresAt: Date | null;
}

const hashToken = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();
/** A token as links carry it: 43 base64url characters (anything else is not ours). */
const looksLikeToken = (value: string): boolean => /^[A-Za-z0-9_-]{43}$/.test(value);

/**
 * Double opt-in for notification recipients: an address on a workspace's list gets digests and
 * alerts only after confirming through a mailed link (single-use, 7 days). Confirmation mails
 * themselves are limited: one per address a day, CONFIRMATIONS_PER_DAY per workspace a day
 * (mail-limits.ts). A mail written to a stranger says what it is and asks for nothing else.
 */
@Injectable()
export class RecipientsService {
  private readonly logger = new Logger('Recipients');

  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly recipients: NotificationRecipientsRepository,
    private readonly workspaces: WorkspacesService,
    private readonly outbox: MailOutbox,
  ) {}

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.recipients.transaction(work);
  }

  /** In the transaction that saved the list: the rows follow it (see the repository). */
  sync(tx: Tx, workspaceId: string, addresses: string[]): Promise<void> {
    return this.recipients.sync(tx, workspaceId, addresses);
  }

  /** The addresses of `list` that confirmed, in the list's order and spelling. */
  async confirmedOf(workspaceId: string, list: string[], runner?: Sql): Promise<string[]> {
    if (list.length === 0) return [];
    const confirmed = await this.recipients.confirmedKeys(workspaceId, runner);
    return list.filter((a) => confirmed.has(a.toLowerCase()));
  }

  async states(workspaceId: string, list: string[], now = new Date()): Promise<RecipientState[]> {
    const rows = new Map((await this.recipients.listed(workspaceId)).map((r) => [r.address.toLowerCase(), r]));
    return list.map((address) => {
      const r = rows.get(address.toLowerCase());
      const live = r?.tokenExpiresAt != null && r.tokenExpiresAt.getTime() > now.getTime();
      return {
        address,
        status: r?.confirmedAt ? 'confirmed' : live ? 'pending' : 'waiting',
        confirmationSentAt: r?.confirmationSentAt ?? null,
        linkExpiresAt: live ? r.tokenExpiresAt : null,
      };
    });
  }

  /** Confirmation mails for every workspace with addresses waiting (the notifier's poll). */
  async sendAllDue(now = new Date()): Promise<number> {
    let n = 0;
    for (const id of await this.recipients.workspacesWaiting(new Date(now.getTime() - CONFIRMATION_EVERY_MS)))
      n += await this.sendDue(id, now);
    return n;
  }

  /**
   * Writes confirmation mails to the workspace's waiting addresses, within the day's budget,
   * in one transaction under the workspace's lock (so two processes share one budget).
   */
  async sendDue(workspaceId: string, now = new Date()): Promise<number> {
    const sent = await this.recipients.transaction(async (tx) => {
      await this.recipients.lockWorkspace(tx, workspaceId);
      const budget = confirmationBudget(await this.recipients.sentSince(tx, workspaceId, dayBefore(now)));
      if (budget === 0) return 0;
      const waiting = await this.recipients.waiting(tx, workspaceId, new Date(now.getTime() - CONFIRMATION_EVERY_MS), budget);
      if (waiting.length === 0) return 0;
      const workspace = await this.workspaces.find(workspaceId);
      for (const { address } of waiting) {
        const token = randomBytes(32).toString('base64url');
        await this.recipients.linkSent(tx, workspaceId, address, hashToken(token), new Date(now.getTime() + CONFIRMATION_TTL_MS), now);
        const mail = confirmationMail({
          workspaceName: workspace?.name ?? 'your workspace',
          address,
          link: `${this.config.publicUrl}/settings/confirm-recipient?token=${token}`,
          days: CONFIRMATION_TTL_MS / 86_400_000,
        });
        await this.outbox.enqueue(tx, { workspaceId, kind: 'recipient_confirmation', recipients: [address], ...mail });
      }
      return waiting.length;
    });
    if (sent > 0) this.logger.log(`${sent} recipient confirmation mail(s) written for workspace ${workspaceId}`);
    return sent;
  }

  /** What a link stands for, without using it (the page shows it before the button). */
  async linkFor(token: string, now = new Date()): Promise<{ workspaceName: string; address: string } | null> {
    if (!looksLikeToken(token)) return null;
    const row = await this.recipients.findByToken(hashToken(token), now);
    if (!row) return null;
    const workspace = await this.workspaces.find(row.workspaceId);
    return { workspaceName: workspace?.name ?? 'a workspace', address: row.address };
  }

  /** Uses a link: the address is confirmed, the link spent. Null when it was not live. */
  async confirm(token: string, now = new Date()): Promise<{ workspaceName: string; address: string } | null> {
    if (!looksLikeToken(token)) return null;
    const row = await this.recipients.confirm(hashToken(token), now);
    if (!row) return null;
    const workspace = await this.workspaces.find(row.workspaceId);
    return { workspaceName: workspace?.name ?? 'a workspace', address: row.address };
  }
}
