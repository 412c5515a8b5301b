import { Injectable } from '@nestjs/common';
import { Db, Sql, Tx } from '../database/db';

/** Where one listed recipient stands. */
export interface RecipientRow {
  address: string;
  confirmedAt: Date | null;
  confirmationSentAt: Date | null;
  tokenExpiresAt: Date | null;
}

const COLUMNS = `address, confirmed_at AS "confirmedAt", confirmation_sent_at AS "confirmationSentAt", token_expires_at AS "tokenExpiresAt"`;

/**
 * SQL of notification_recipients (see the migration MailAbuse1765180000000): whether each
 * address of a workspace's recipient list confirmed it wants Herald's mail, and its link.
 */
@Injectable()
export class NotificationRecipientsRepository {
  constructor(private readonly db: Db) {}

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /**
   * Makes the rows follow the list just saved: new addresses become pending rows; addresses no
   * longer listed lose their confirmation and their link (adding one back asks again), but keep
   * when their last confirmation mail went out (so re-adding does not mail it again that day).
   */
  async sync(runner: Sql, workspaceId: string, addresses: string[]): Promise<void> {
    const keys = addresses.map((a) => a.toLowerCase());
    await runner.query(
      `UPDATE notification_recipients SET listed = false, confirmed_at = NULL, token_hash = NULL, token_expires_at = NULL
       WHERE workspace_id = $1 AND listed AND NOT (address_key = ANY($2::text[]))`,
      [workspaceId, keys],
    );
    if (addresses.length === 0) return;
    await runner.query(
      `INSERT INTO notification_recipients (workspace_id, address)
       SELECT $1, a FROM unnest($2::text[]) AS a
       ON CONFLICT (workspace_id, address_key) DO UPDATE SET listed = true, address = EXCLUDED.address`,
      [workspaceId, addresses],
    );
  }

  /** Every listed address of the workspace, in no particular order. */
  listed(workspaceId: string, runner: Sql = this.db): Promise<RecipientRow[]> {
    return runner.query(`SELECT ${COLUMNS} FROM notification_recipients WHERE workspace_id = $1 AND listed`, [workspaceId]);
  }

  /** The confirmed addresses of the workspace, lower-cased. */
  async confirmedKeys(workspaceId: string, runner: Sql = this.db): Promise<Set<string>> {
    const rows = await runner.query<{ key: string }>(
      `SELECT address_key AS key FROM notification_recipients WHERE workspace_id = $1 AND listed AND confirmed_at IS NOT NULL`,
      [workspaceId],
    );
    return new Set(rows.map((r) => r.key));
  }

  /** Workspaces with a listed address that waits for its confirmation mail (no link out, none confirmed). */
  async workspacesWaiting(since: Date): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(
      `SELECT DISTINCT workspace_id AS id FROM notification_recipients
       WHERE listed AND confirmed_at IS NULL AND token_hash IS NULL AND (confirmation_sent_at IS NULL OR confirmation_sent_at <= $1)`,
      [since],
    );
    return rows.map((r) => r.id);
  }

  /** Serialises the confirmation mails of one workspace (two processes cannot both use the day's budget). */
  async lockWorkspace(tx: Tx, workspaceId: string): Promise<void> {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('notification-recipients'), hashtext($1))`, [workspaceId]);
  }

  /** Confirmation mails the workspace wrote since `since`: one per address at most in a day, so rows count them. */
  async sentSince(tx: Sql, workspaceId: string, since: Date): Promise<number> {
    const rows = await tx.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM notification_recipients WHERE workspace_id = $1 AND confirmation_sent_at > $2`,
      [workspaceId, since],
    );
    return rows[0].n;
  }

  /** Listed addresses waiting for a confirmation mail, oldest first, at most `limit`. */
  waiting(tx: Sql, workspaceId: string, since: Date, limit: number): Promise<{ address: string }[]> {
    return tx.query(
      `SELECT address FROM notification_recipients
       WHERE workspace_id = $1 AND listed AND confirmed_at IS NULL AND token_hash IS NULL
         AND (confirmation_sent_at IS NULL OR confirmation_sent_at <= $2)
       ORDER BY created_at, address_key LIMIT $3`,
      [workspaceId, since, limit],
    );
  }

  async linkSent(tx: Sql, workspaceId: string, address: string, tokenHash: Buffer, expiresAt: Date, now: Date): Promise<void> {
    await tx.query(
      `UPDATE notification_recipients SET token_hash = $3, token_expires_at = $4, confirmation_sent_at = $5
       WHERE workspace_id = $1 AND address_key = lower($2)`,
      [workspaceId, address, tokenHash, expiresAt, now],
    );
  }

  /** The address and workspace a live link stands for (null: unknown, used, expired or withdrawn). */
  async findByToken(tokenHash: Buffer, now: Date): Promise<{ workspaceId: string; address: string } | null> {
    const rows = await this.db.query<{ workspaceId: string; address: string }>(
      `SELECT workspace_id AS "workspaceId", address FROM notification_recipients WHERE token_hash = $1 AND token_expires_at > $2`,
      [tokenHash, now],
    );
    return rows[0] ?? null;
  }

  /** Uses a live link: the address is confirmed and the link spent, in one statement. */
  async confirm(tokenHash: Buffer, now: Date): Promise<{ workspaceId: string; address: string } | null> {
    const rows = await this.db.query<{ workspaceId: string; address: string }>(
      `UPDATE notification_recipients SET confirmed_at = $2, token_hash = NULL, token_expires_at = NULL
       WHERE token_hash = $1 AND token_expires_at > $2 AND listed
       RETURNING workspace_id AS "workspaceId", address`,
      [tokenHash, now],
    );
    return rows[0] ?? null;
  }
}
