import { Injectable } from '@nestjs/common';
import { Db, Sql, Tx } from '../database/db';
import type { Keyset, Listed } from '../common/pagination';
import type { Provider } from '../connectors/connector.interface';
import type { AccountRow } from './account.types';
import type { RetryPolicyOverride } from '../retry/backoff';

const COLUMNS = `
  id, workspace_id AS "workspaceId", provider, name, status, status_reason AS "statusReason", config,
  credentials, credentials_version AS "credentialsVersion", retry_policy AS "retryPolicy",
  max_in_flight AS "maxInFlight", circuit_state AS "circuitState", circuit_open_until AS "circuitOpenUntil",
  consecutive_failures AS "consecutiveFailures", last_error AS "lastError", last_success_at AS "lastSuccessAt",
  created_at AS "createdAt", updated_at AS "updatedAt"`;

export interface AccountChanges {
  name?: string;
  config?: Record<string, unknown>;
  credentials?: string;
  retryPolicy?: RetryPolicyOverride | null;
  maxInFlight?: number;
}

/**
 * SQL of the accounts table. Every method is scoped by workspace and ignores deleted
 * accounts. Methods that change an account's state take the caller's transaction, in which
 * the service first changes the account's jobs through the queue (JobLifecycle): jobs are
 * always locked before the account (the same order as the worker's rounds), so they never
 * deadlock. Status and circuit columns are account-state's (AccountStateService), the only writer of them.
 */
@Injectable()
export class AccountsRepository {
  constructor(private readonly db: Db) {}

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  async insert(input: {
    id: string;
    workspaceId: string;
    provider: Provider;
    name: string;
    config: Record<string, unknown>;
    credentials: string;
    retryPolicy: RetryPolicyOverride | null;
    maxInFlight: number;
  }): Promise<AccountRow> {
    const rows: AccountRow[] = await this.db.query(
      `INSERT INTO accounts (id, workspace_id, provider, name, config, credentials, retry_policy, max_in_flight)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
      [input.id, input.workspaceId, input.provider, input.name, input.config, input.credentials, input.retryPolicy, input.maxInFlight],
    );
    return rows[0];
  }

  async find(workspaceId: string, id: string, m?: Sql): Promise<AccountRow | null> {
    const rows: AccountRow[] = await (m ?? this.db).query(
      `SELECT ${COLUMNS} FROM accounts WHERE workspace_id = $1 AND id = $2 AND deleted_at IS NULL`,
      [workspaceId, id],
    );
    return rows[0] ?? null;
  }

  /**
   * The workspace's live accounts among `ids` (others, and other workspaces' ids, are absent).
   * Runs on every POST /v1/posts: a prepared statement.
   */
  async findMany(workspaceId: string, ids: string[]): Promise<Pick<AccountRow, 'id' | 'provider' | 'status'>[]> {
    return this.db.prepared(
      'herald_accounts_for_post',
      `SELECT id, provider, status FROM accounts WHERE workspace_id = $1 AND id = ANY($2::uuid[]) AND deleted_at IS NULL`,
      [workspaceId, ids],
    );
  }

  list(workspaceId: string, after: Keyset | null, limit: number): Promise<Listed<AccountRow>[]> {
    return this.db.query(
      `SELECT ${COLUMNS}, (extract(epoch FROM created_at) * 1000000)::bigint::text AS "cursorMicros" FROM accounts
       WHERE workspace_id = $1 AND deleted_at IS NULL
         AND ($2::bigint IS NULL OR (created_at, id) < ('epoch'::timestamptz + $2::bigint * interval '1 microsecond', $3::uuid))
       ORDER BY created_at DESC, id DESC LIMIT $4`,
      [workspaceId, after?.micros ?? null, after?.id ?? null, limit + 1],
    );
  }

  async update(workspaceId: string, id: string, changes: AccountChanges, m: Sql): Promise<void> {
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
  async delete(workspaceId: string, id: string, m: Sql): Promise<boolean> {
    const rows = await m.query(
      `UPDATE accounts SET deleted_at = now(), updated_at = now()
       WHERE workspace_id = $1 AND id = $2 AND deleted_at IS NULL RETURNING id`,
      [workspaceId, id],
    );
    return rows.length > 0;
  }
}
