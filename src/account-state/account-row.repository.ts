import { Injectable } from '@nestjs/common';
import { Db, Sql } from '../database/db';
import type { RetryPolicyOverride } from '../retry/backoff';

/** A new accounts row: what a person chose, and the credentials already sealed by the accounts module. */
export interface NewAccountRow {
  id: string;
  workspaceId: string;
  provider: string;
  name: string;
  config: Record<string, unknown>;
  credentials: string;
  retryPolicy: RetryPolicyOverride | null;
  maxInFlight: number;
  /** What it is for: publishing posts (the default), or receiving Herald's events (an event endpoint: docs/events.md). */
  purpose?: 'publish' | 'events';
}

/** A person's changes to an account's own columns; absent fields stay as they are. */
export interface AccountChanges {
  name?: string;
  config?: Record<string, unknown>;
  credentials?: string;
  retryPolicy?: RetryPolicyOverride | null;
  maxInFlight?: number;
}

/**
 * The statements on the rest of an accounts row: its creation, a person's edits (name, config,
 * credentials, retry policy, in-flight cap), credentials an attempt refreshed, and the soft
 * delete. This module is the accounts table's one writer (architecture.json "tables"): its
 * delivery state through the transition tables (AccountStateRepository), the rest here. The
 * decisions (what to seal, what to audit, which jobs change first) are the accounts module's
 * (AccountsService), which calls these through AccountStateService; nothing here decides.
 *
 * Every statement runs in the caller's transaction, after the caller changed the account's jobs
 * (jobs are locked before accounts, everywhere), and ignores deleted accounts.
 */
@Injectable()
export class AccountRowRepository {
  constructor(private readonly db: Db) {}

  async insert(row: NewAccountRow, m: Sql = this.db): Promise<void> {
    await m.query(
      `INSERT INTO accounts (id, workspace_id, provider, name, config, credentials, retry_policy, max_in_flight, purpose)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        row.id,
        row.workspaceId,
        row.provider,
        row.name,
        row.config,
        row.credentials,
        row.retryPolicy,
        row.maxInFlight,
        row.purpose ?? 'publish',
      ],
    );
  }

  /** A new credential bumps credentials_version: an attempt's refresh based on the old one is then dropped (storeRefreshedCredentials). */
  async update(m: Sql, workspaceId: string, id: string, changes: AccountChanges): Promise<void> {
    await m.query(
      `UPDATE accounts SET
         name = coalesce($3, name),
         config = coalesce($4, config),
         credentials = coalesce($5, credentials),
         credentials_version = credentials_version + CASE WHEN $5::text IS NULL THEN 0 ELSE 1 END,
         retry_policy = CASE WHEN $6::boolean THEN $7::jsonb ELSE retry_policy END,
         max_in_flight = coalesce($8, max_in_flight),
         updated_at = now()
       WHERE workspace_id = $1 AND id = $2 AND deleted_at IS NULL`,
      [
        workspaceId,
        id,
        changes.name ?? null,
        changes.config ?? null,
        changes.credentials ?? null,
        changes.retryPolicy !== undefined,
        changes.retryPolicy ?? null,
        changes.maxInFlight ?? null,
      ],
    );
  }

  /**
   * Credentials an attempt refreshed (a new Bluesky session, a new LinkedIn token), stored in a
   * worker round's transaction only if nobody changed the account's credentials since the
   * attempt read them (credentials_version): a password or token a person saved while the
   * attempt ran is newer and wins; the attempt's session is simply dropped (the next attempt
   * starts from the person's credentials). Returns the accounts whose credentials were stored.
   */
  async storeRefreshedCredentials(tx: Sql, updates: { accountId: string; sealed: string; basedOnVersion: number }[]): Promise<Set<string>> {
    if (updates.length === 0) return new Set();
    const rows = await tx.prepared<{ id: string }>(
      'herald_store_credentials',
      `UPDATE accounts a SET credentials = u.sealed, credentials_version = a.credentials_version + 1, updated_at = now()
       FROM unnest($1::uuid[], $2::text[], $3::int[]) AS u(id, sealed, based_on)
       WHERE a.id = u.id AND a.credentials_version = u.based_on AND a.deleted_at IS NULL
       RETURNING a.id`,
      [updates.map((u) => u.accountId), updates.map((u) => u.sealed), updates.map((u) => u.basedOnVersion)],
    );
    return new Set(rows.map((r) => r.id));
  }

  /**
   * Soft delete (the row stays so its jobs' history stays readable). Its unstarted jobs are
   * cancelled by the caller, through the queue, first. False when unknown.
   */
  async softDelete(m: Sql, workspaceId: string, id: string): Promise<boolean> {
    const rows = await m.query(
      `UPDATE accounts SET deleted_at = now(), updated_at = now()
       WHERE workspace_id = $1 AND id = $2 AND deleted_at IS NULL RETURNING id`,
      [workspaceId, id],
    );
    return rows.length > 0;
  }
}
