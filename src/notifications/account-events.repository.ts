import { Injectable } from '@nestjs/common';
import { Db, Sql, Tx } from '../database/db';
import type { AlertKind } from './alert-builder';

export interface AccountEventRow {
  id: string;
  accountId: string;
  workspaceId: string;
  kind: AlertKind;
  detail: string | null;
  consecutiveFailures: number;
  disableThreshold: number | null;
  tokenExpiresAt: Date | null;
  createdAt: Date;
}

export type EventOutcome = 'queued' | 'no_recipients' | 'alerts_off' | 'resolved' | 'capped_account' | 'capped_workspace';

/**
 * SQL of account_events, the outbox of alerts. Rows are written by the trigger
 * accounts_alert_outbox (in the transaction that changed the account; see the migration) and,
 * for tokens about to expire, by the notifier's sweep. The notifier takes pending rows with
 * FOR UPDATE SKIP LOCKED, writes their mail and marks them processed in one transaction: an
 * event becomes exactly one mail (or a recorded reason for none), whatever crashes.
 */
@Injectable()
export class AccountEventsRepository {
  constructor(private readonly db: Db) {}

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /** Oldest pending events first, locked for this transaction; other processes skip them. */
  claimPending(runner: Sql, limit: number): Promise<AccountEventRow[]> {
    return runner.query(
      `SELECT id::text, account_id AS "accountId", workspace_id AS "workspaceId", kind, detail,
              consecutive_failures AS "consecutiveFailures", disable_threshold AS "disableThreshold",
              token_expires_at AS "tokenExpiresAt", created_at AS "createdAt"
       FROM account_events WHERE processed_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [limit],
    );
  }

  async markProcessed(runner: Sql, id: string, outcome: EventOutcome, mailId: string | null): Promise<void> {
    await runner.query(`UPDATE account_events SET processed_at = now(), outcome = $2, mail_id = $3 WHERE id = $1::bigint`, [
      id,
      outcome,
      mailId,
    ]);
  }

  /** Serialises the alert decisions of one workspace (the daily limits are counted, then used). */
  async lockWorkspace(tx: Sql, workspaceId: string): Promise<void> {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('alert-limits'), hashtext($1))`, [workspaceId]);
  }

  /** Alerts mailed since `since`, for the workspace and for one of its accounts. */
  async mailedSince(runner: Sql, workspaceId: string, accountId: string, since: Date): Promise<{ account: number; workspace: number }> {
    const rows = await runner.query<{ account: number; workspace: number }>(
      `SELECT count(*) FILTER (WHERE account_id = $2)::int AS account, count(*)::int AS workspace
       FROM account_events WHERE workspace_id = $1 AND outcome = 'queued' AND processed_at > $3`,
      [workspaceId, accountId, since],
    );
    return rows[0];
  }

  /** Alerts held back by a daily limit since `since`, per account and limit (the settings show them). */
  cappedSince(
    workspaceId: string,
    since: Date,
  ): Promise<{ accountId: string; reached: 'account' | 'workspace'; count: number; lastAt: Date }[]> {
    return this.db.query(
      `SELECT account_id AS "accountId", CASE outcome WHEN 'capped_account' THEN 'account' ELSE 'workspace' END AS reached,
              count(*)::int AS count, max(processed_at) AS "lastAt"
       FROM account_events WHERE workspace_id = $1 AND outcome IN ('capped_account', 'capped_workspace') AND processed_at > $2
       GROUP BY account_id, outcome ORDER BY max(processed_at) DESC`,
      [workspaceId, since],
    );
  }

  /** A token's expiry warning, once per account and expiry (the partial unique index). True when new. */
  async addTokenExpiring(accountId: string, workspaceId: string, expiresAt: Date): Promise<boolean> {
    const rows = await this.db.query(
      `INSERT INTO account_events (account_id, workspace_id, kind, consecutive_failures, token_expires_at)
       VALUES ($1, $2, 'token_expiring', 0, $3)
       ON CONFLICT (account_id, token_expires_at) WHERE kind = 'token_expiring' DO NOTHING
       RETURNING id`,
      [accountId, workspaceId, expiresAt],
    );
    return rows.length > 0;
  }

  /** The alert threshold the trigger reads (see the migration): this process's setting. */
  async setDisableThreshold(threshold: number): Promise<void> {
    await this.db.query(
      `INSERT INTO alert_thresholds (singleton, disable_threshold) VALUES (true, $1)
       ON CONFLICT (singleton) DO UPDATE SET disable_threshold = EXCLUDED.disable_threshold, updated_at = now()
       WHERE alert_thresholds.disable_threshold IS DISTINCT FROM EXCLUDED.disable_threshold`,
      [threshold],
    );
  }
}
