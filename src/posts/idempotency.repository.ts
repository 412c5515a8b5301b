import { Injectable } from '@nestjs/common';
import { Db } from '../database/db';

export type IdempotencyBegin =
  { kind: 'new' } | { kind: 'replay'; status: number; body: unknown } | { kind: 'mismatch' } | { kind: 'in_flight' };

/** How long a key is remembered (docs/api.md: at least 24 h). */
export const IDEMPOTENCY_TTL_HOURS = 24;
/** A key left `in_flight` this long belongs to a request that died mid-way: it may be taken over. */
const ABANDONED_AFTER = '2 minutes';

/**
 * Idempotency-Key of POST /v1/posts. The key is claimed in its own short transaction first
 * (so a concurrent duplicate sees `in_flight` at once and gets 409, instead of waiting on a
 * row lock), then completed by the statement that writes the post (PostsRepository.create):
 * the post and its replayable answer commit together or not at all.
 */
@Injectable()
export class IdempotencyRepository {
  constructor(private readonly db: Db) {}

  /**
   * Claims the key, or reads what holds it, in one statement (a replay costs one round trip). The
   * SELECT sees the table as it was before the claim: when the claim took the row, what it shows
   * is ignored. A key committed by another request after this statement's snapshot, which the
   * claim saw and the SELECT cannot, reads as no row: `begin` runs again and then sees it.
   */
  async begin(workspaceId: string, key: string, requestHash: Buffer): Promise<IdempotencyBegin> {
    const [row] = await this.db.prepared<{
      claimed: boolean;
      requestHash: Buffer | null;
      state: string | null;
      status: number | null;
      body: unknown;
    }>(
      'herald_idempotency_begin',
      `WITH claim AS (
         INSERT INTO idempotency_keys (workspace_id, key, request_hash, state) VALUES ($1, $2, $3, 'in_flight')
         ON CONFLICT (workspace_id, key) DO UPDATE
           SET request_hash = EXCLUDED.request_hash, state = 'in_flight', response_status = NULL, response_body = NULL, created_at = now()
           WHERE idempotency_keys.created_at < now() - interval '${IDEMPOTENCY_TTL_HOURS} hours'
              OR (idempotency_keys.state = 'in_flight' AND idempotency_keys.created_at < now() - interval '${ABANDONED_AFTER}'
                  AND idempotency_keys.request_hash = EXCLUDED.request_hash)
         RETURNING 1
       )
       SELECT EXISTS (SELECT 1 FROM claim) AS claimed, i.request_hash AS "requestHash", i.state, i.response_status AS status, i.response_body AS body
       FROM (VALUES (1)) AS one (x) LEFT JOIN idempotency_keys i ON i.workspace_id = $1 AND i.key = $2`,
      [workspaceId, key, requestHash],
    );
    if (row.claimed) return { kind: 'new' };
    if (row.requestHash === null || row.state === null) return this.begin(workspaceId, key, requestHash); // not visible to this snapshot yet, or purged
    if (!row.requestHash.equals(requestHash)) return { kind: 'mismatch' };
    if (row.state === 'in_flight') return { kind: 'in_flight' };
    return { kind: 'replay', status: row.status ?? 200, body: row.body };
  }

  /**
   * The answer of a request whose writes were several statements (POST /v1/posts/batch: each item
   * committed on its own, under its own key), stored once they all are. A single post's answer
   * is stored by the statement that writes the post instead (PostsRepository.create).
   */
  async complete(workspaceId: string, key: string, status: number, body: unknown): Promise<void> {
    await this.db.query(
      `UPDATE idempotency_keys SET state = 'completed', response_status = $3, response_body = $4
       WHERE workspace_id = $1 AND key = $2 AND state = 'in_flight'`,
      [workspaceId, key, status, JSON.stringify(body)],
    );
  }

  /** The request failed before anything was written: free the key for a corrected retry. */
  async abandon(workspaceId: string, key: string): Promise<void> {
    await this.db.query(`DELETE FROM idempotency_keys WHERE workspace_id = $1 AND key = $2 AND state = 'in_flight'`, [workspaceId, key]);
  }

  async purgeExpired(): Promise<number> {
    const rows = await this.db.query(
      `DELETE FROM idempotency_keys WHERE created_at < now() - interval '${IDEMPOTENCY_TTL_HOURS * 2} hours' RETURNING 1`,
    );
    return rows.length;
  }
}
