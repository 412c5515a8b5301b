import { Injectable } from '@nestjs/common';
import { Db } from '../../database/db';

export interface OAuthStateRow {
  sessionId: string;
  browserHash: Buffer;
  accountId: string | null;
  accountName: string | null;
  requestedScopes: string;
}

/** SQL of settings_oauth_states: the one-use `state` values of the LinkedIn connect flow. */
@Injectable()
export class OAuthStatesRepository {
  constructor(private readonly db: Db) {}

  async insert(input: {
    stateHash: Buffer;
    sessionId: string;
    browserHash: Buffer;
    accountId: string | null;
    accountName: string | null;
    requestedScopes: string;
    expiresAt: Date;
  }): Promise<void> {
    await this.db.query(
      `INSERT INTO settings_oauth_states (state_hash, session_id, browser_hash, account_id, account_name, requested_scopes, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [input.stateHash, input.sessionId, input.browserHash, input.accountId, input.accountName, input.requestedScopes, input.expiresAt],
    );
    // Old states go as new ones come: the table only ever holds flows of the last hour or so.
    await this.db.query(`DELETE FROM settings_oauth_states WHERE expires_at < now() - interval '1 hour'`);
  }

  /**
   * Marks the state used and returns it, if it exists, is unused and has not expired. One
   * guarded UPDATE: of two callbacks with the same state, exactly one gets the row.
   */
  async consume(stateHash: Buffer): Promise<OAuthStateRow | null> {
    const rows = await this.db.query<OAuthStateRow>(
      `UPDATE settings_oauth_states SET used_at = now()
       WHERE state_hash = $1 AND used_at IS NULL AND expires_at > now()
       RETURNING session_id AS "sessionId", browser_hash AS "browserHash", account_id AS "accountId",
                 account_name AS "accountName", requested_scopes AS "requestedScopes"`,
      [stateHash],
    );
    return rows[0] ?? null;
  }
}
