import { Injectable } from '@nestjs/common';
import { Db, Sql } from '../database/db';
import type { AccountHealthRow } from './account.types';

const HEALTH_COLUMNS = `id, workspace_id AS "workspaceId", name, provider, status, status_reason AS "statusReason", config,
  circuit_opened_at AS "circuitOpenedAt", consecutive_failures AS "consecutiveFailures", last_error AS "lastError",
  deleted_at IS NOT NULL AS deleted`;

/**
 * Read-only queries on accounts for reports (the daily digest, alerts). Kept apart from
 * AccountsRepository, which owns the writes: nothing here changes a row. Each read takes an
 * optional runner so a caller can make it inside its own transaction.
 */
@Injectable()
export class AccountReportsRepository {
  constructor(private readonly db: Db) {}

  /** The workspace's live accounts that publish (event endpoints are not among them), by name. */
  live(workspaceId: string, runner: Sql = this.db): Promise<AccountHealthRow[]> {
    return runner.query(
      `SELECT ${HEALTH_COLUMNS} FROM accounts WHERE workspace_id = $1 AND deleted_at IS NULL AND purpose = 'publish' ORDER BY name, id`,
      [workspaceId],
    );
  }

  /** One account, deleted or not (an alert about an account removed since says nothing). */
  async find(id: string, runner: Sql = this.db): Promise<AccountHealthRow | null> {
    const rows = await runner.query<AccountHealthRow>(`SELECT ${HEALTH_COLUMNS} FROM accounts WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  /**
   * Active LinkedIn accounts whose token cannot be refreshed and carries an expiry (the
   * caller decides how soon is soon). A self-serve LinkedIn app gets no refresh token: a
   * person has to reconnect before the token's 60 days are up.
   */
  unrefreshableTokens(): Promise<{ id: string; workspaceId: string; tokenExpiresAt: string }[]> {
    return this.db.query(
      `SELECT id, workspace_id AS "workspaceId", config->>'tokenExpiresAt' AS "tokenExpiresAt"
       FROM accounts
       WHERE provider = 'linkedin' AND deleted_at IS NULL AND status = 'active'
         AND jsonb_typeof(config->'tokenExpiresAt') = 'string'
         AND config->'hasRefreshToken' IS DISTINCT FROM 'true'::jsonb`,
    );
  }
}
