import { Injectable } from '@nestjs/common';
import { Db } from '../../database/db';

export interface ConnectStateRow {
  sessionId: string;
  browserHash: Buffer;
  accountId: string | null;
  accountName: string | null;
  requestedScopes: string;
  /** What the platform asked to keep until its callback (AuthorizeStep.flow); never a secret. */
  flow: string | null;
}

/**
 * SQL of account_connect_states: the one-use `state` values of the "Connect with …" flows
 * (LinkedIn's, Bluesky's and Mastodon's), each bound to the page session and the browser that started it.
 */
@Injectable()
export class ConnectStatesRepository {
  constructor(private readonly db: Db) {}

  async insert(input: {
    stateHash: Buffer;
    sessionId: string;
    browserHash: Buffer;
    accountId: string | null;
    accountName: string | null;
    requestedScopes: string;
    flow: string | null;
    expiresAt: Date;
  }): Promise<void> {
    await this.db.query(
      `INSERT INTO account_connect_states (state_hash, session_id, browser_hash, account_id, account_name, requested_scopes, flow, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        input.stateHash,
        input.sessionId,
        input.browserHash,
        input.accountId,
        input.accountName,
        input.requestedScopes,
        input.flow,
        input.expiresAt,
      ],
    );
    // Old states go as new ones come: the table only ever holds flows of the last hour or so.
    await this.db.query(`DELETE FROM account_connect_states WHERE expires_at < now() - interval '1 hour'`);
  }

  /**
   * Marks the state used and returns it, if it exists, is unused, has not expired AND was
   * started by this browser (its cookie's hash): the state is consumed only together with the
   * browser check, in one guarded UPDATE. Of two callbacks with the same state and browser,
   * exactly one gets the row; a callback from another browser gets nothing and uses nothing up,
   * so someone who saw a person's state cannot spoil that person's flow.
   */
  async consume(stateHash: Buffer, browserHash: Buffer): Promise<ConnectStateRow | null> {
    const rows = await this.db.query<ConnectStateRow>(
      `UPDATE account_connect_states SET used_at = now()
       WHERE state_hash = $1 AND browser_hash = $2 AND used_at IS NULL AND expires_at > now()
       RETURNING session_id AS "sessionId", browser_hash AS "browserHash", account_id AS "accountId",
                 account_name AS "accountName", requested_scopes AS "requestedScopes", flow`,
      [stateHash, browserHash],
    );
    return rows[0] ?? null;
  }

  /** Is this state waiting for its callback (unused, unexpired)? Reads only: for the refusal's wording. */
  async pending(stateHash: Buffer): Promise<boolean> {
    const rows = await this.db.query(
      `SELECT 1 FROM account_connect_states WHERE state_hash = $1 AND used_at IS NULL AND expires_at > now()`,
      [stateHash],
    );
    return rows.length > 0;
  }
}
