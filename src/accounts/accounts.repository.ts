import { Injectable } from '@nestjs/common';
import { Db, Sql, Tx } from '../database/db';
import { compose, EmbeddedRead, param, sql, SqlPiece } from '../database/statement';
import type { Keyset, Listed } from '../common/pagination';
import type { AccountRow, DeliveryAccountRow } from './account.types';

/** The accounts row as AccountRow, for this module's reads (event-endpoints.repository.ts too). */
export const ACCOUNT_COLUMNS = `
  id, workspace_id AS "workspaceId", provider, name, status, status_reason AS "statusReason", config,
  credentials, credentials_version AS "credentialsVersion", retry_policy AS "retryPolicy",
  max_in_flight AS "maxInFlight", circuit_state AS "circuitState", circuit_open_until AS "circuitOpenUntil",
  consecutive_failures AS "consecutiveFailures", last_error AS "lastError", last_success_at AS "lastSuccessAt",
  created_at AS "createdAt", updated_at AS "updatedAt"`;

/** What the intake reads of a target account. */
export type PostTargetAccount = Pick<AccountRow, 'id' | 'provider' | 'status' | 'config'>;

/**
 * Reads of the accounts table for the API, the page, the intake and the worker; every one but
 * the worker's is scoped by workspace, and every one ignores deleted accounts. The API's, the
 * page's and the intake's read accounts that publish (`purpose = 'publish'`): an event endpoint
 * (event-endpoints.repository.ts) is no account a person lists or posts to. The table's one
 * writer is src/account-state (architecture.json "tables"): AccountsService decides a change and
 * writes it through AccountStateService, in a transaction opened here, after changing the
 * account's jobs through the queue (JobLifecycle): jobs are always locked before the account
 * (the same order as the worker's rounds), so they never deadlock.
 */
@Injectable()
export class AccountsRepository {
  constructor(private readonly db: Db) {}

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  async find(workspaceId: string, id: string, m?: Sql): Promise<AccountRow | null> {
    const rows: AccountRow[] = await (m ?? this.db).query(
      `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE workspace_id = $1 AND id = $2 AND deleted_at IS NULL AND purpose = 'publish'`,
      [workspaceId, id],
    );
    return rows[0] ?? null;
  }

  /**
   * The workspace's live accounts among `ids` (others, and other workspaces' ids, are absent).
   * Runs on every POST /v1/posts: a prepared statement.
   */
  async findMany(workspaceId: string, ids: string[], carried: EmbeddedRead | null = null): Promise<PostTargetAccount[]> {
    // The config too: a Mastodon account's limits are its instance's, kept there.
    if (!carried) {
      return this.db.prepared(
        'herald_accounts_for_post',
        `SELECT id, provider, status, config FROM accounts WHERE workspace_id = $1 AND id = ANY($2::uuid[]) AND deleted_at IS NULL AND purpose = 'publish'`,
        [workspaceId, ids],
      );
    }
    // Carrying another module's read (the intake: the workspace's approval setting), answered
    // whether or not an account matched: one row with null columns when none did.
    const { text, values } = compose(
      sql`SELECT a.id, a.provider, a.status, a.config, ${carried.piece} AS carried
          FROM (VALUES (1)) AS one (x)
          LEFT JOIN accounts a ON a.workspace_id = ${param(workspaceId)} AND a.id = ANY(${param(ids)}::uuid[]) AND a.deleted_at IS NULL AND a.purpose = 'publish'`,
    );
    const rows = await this.db.prepared<PostTargetAccount & { carried: unknown }>(`herald_accounts_for_post_${carried.name}`, text, values);
    carried.take(rows[0]?.carried ?? null);
    return rows.filter((r) => r.id !== null).map(({ carried: _, ...account }) => account);
  }

  /**
   * True when the workspace's accounts that publish are still `accounts` as they were read (the
   * same provider, status and config, none deleted): a boolean piece for the post's statement,
   * which writes a post on the accounts as this process last read them only if they still are.
   */
  stillAsRead(workspaceId: string, accounts: readonly PostTargetAccount[]): SqlPiece {
    return sql`(SELECT count(*) FROM accounts a
                JOIN unnest(${param(accounts.map((x) => x.id))}::uuid[], ${param(accounts.map((x) => x.provider))}::text[],
                            ${param(accounts.map((x) => x.status))}::text[], ${param(accounts.map((x) => JSON.stringify(x.config)))}::jsonb[])
                     AS g (id, provider, status, config)
                  ON a.id = g.id AND a.provider = g.provider AND a.status = g.status AND a.config = g.config
                WHERE a.workspace_id = ${param(workspaceId)} AND a.deleted_at IS NULL AND a.purpose = 'publish') = ${param(accounts.length)}`;
  }

  /**
   * Accounts' public settings and sealed credentials, for the worker's credentials cache (a
   * claimed job's account, read again only when its credentials version moved). Deleted ones
   * are left out: their jobs go back unattempted.
   */
  forDelivery(ids: string[]): Promise<DeliveryAccountRow[]> {
    return this.db.query(
      `SELECT id, workspace_id AS "workspaceId", name, config, credentials, credentials_version AS "credentialsVersion"
       FROM accounts WHERE id = ANY($1::uuid[]) AND deleted_at IS NULL`,
      [ids],
    );
  }

  list(workspaceId: string, after: Keyset | null, limit: number): Promise<Listed<AccountRow>[]> {
    return this.db.query(
      `SELECT ${ACCOUNT_COLUMNS}, (extract(epoch FROM created_at) * 1000000)::bigint::text AS "cursorMicros" FROM accounts
       WHERE workspace_id = $1 AND deleted_at IS NULL AND purpose = 'publish'
         AND ($2::bigint IS NULL OR (created_at, id) < ('epoch'::timestamptz + $2::bigint * interval '1 microsecond', $3::uuid))
       ORDER BY created_at DESC, id DESC LIMIT $4`,
      [workspaceId, after?.micros ?? null, after?.id ?? null, limit + 1],
    );
  }
}
