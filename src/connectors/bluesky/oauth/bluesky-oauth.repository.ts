import { Injectable } from '@nestjs/common';
import { Db } from '../../../database/db';

/**
 * SQL of the Bluesky OAuth tables (migrations/1764900000000-bluesky-oauth.ts): the client's key,
 * the pending flows (the library's state store), the sessions (its session store) and the
 * refresh leases (its request lock). Values arrive sealed; this file never sees a secret in clear.
 */
@Injectable()
export class BlueskyOAuthRepository {
  constructor(private readonly db: Db) {}

  // ---- the client's key ------------------------------------------------------------------------

  /**
   * The stored key, or `candidate` stored as the key when there is none. One statement, so two
   * processes starting at once agree on one key: the second one's insert does nothing and it
   * reads the first one's row.
   */
  async keyOrInsert(candidate: { kid: string; sealedJwk: string }): Promise<{ kid: string; sealedJwk: string }> {
    await this.db.query(`INSERT INTO bluesky_oauth_keys (id, kid, private_jwk) VALUES (1, $1, $2) ON CONFLICT (id) DO NOTHING`, [
      candidate.kid,
      candidate.sealedJwk,
    ]);
    const rows = await this.db.query<{ kid: string; sealedJwk: string }>(
      `SELECT kid, private_jwk AS "sealedJwk" FROM bluesky_oauth_keys WHERE id = 1`,
    );
    return rows[0];
  }

  // ---- pending flows (state store) -------------------------------------------------------------

  async putState(stateHash: Buffer, sealed: string, ttlMs: number): Promise<void> {
    await this.db.query(
      `INSERT INTO bluesky_oauth_states (state_hash, data, expires_at) VALUES ($1, $2, now() + $3 * interval '1 millisecond')
       ON CONFLICT (state_hash) DO UPDATE SET data = EXCLUDED.data, expires_at = EXCLUDED.expires_at`,
      [stateHash, sealed, ttlMs],
    );
    // Abandoned flows go as new ones come: the table holds the flows of the last hour or so.
    await this.db.query(`DELETE FROM bluesky_oauth_states WHERE expires_at < now() - interval '1 hour'`);
  }

  /** A flow that has not expired. */
  async getState(stateHash: Buffer): Promise<string | null> {
    const rows = await this.db.query<{ data: string }>(
      `SELECT data FROM bluesky_oauth_states WHERE state_hash = $1 AND expires_at > now()`,
      [stateHash],
    );
    return rows[0]?.data ?? null;
  }

  async deleteState(stateHash: Buffer): Promise<void> {
    await this.db.query(`DELETE FROM bluesky_oauth_states WHERE state_hash = $1`, [stateHash]);
  }

  // ---- sessions (session store) ----------------------------------------------------------------

  async putSession(id: string, did: string, sealed: string): Promise<void> {
    await this.db.query(
      `INSERT INTO bluesky_oauth_sessions (id, did, session) VALUES ($1, $2, $3)
       ON CONFLICT (id) DO UPDATE SET did = EXCLUDED.did, session = EXCLUDED.session, updated_at = now()`,
      [id, did, sealed],
    );
  }

  async getSession(id: string): Promise<{ did: string; sealed: string } | null> {
    const rows = await this.db.query<{ did: string; sealed: string }>(
      `SELECT did, session AS sealed FROM bluesky_oauth_sessions WHERE id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }

  async deleteSession(id: string): Promise<void> {
    await this.db.query(`DELETE FROM bluesky_oauth_sessions WHERE id = $1`, [id]);
  }

  // ---- request lock (leases) -------------------------------------------------------------------

  /**
   * Takes the lease `name` for `holder` when it is free or its lease ended. One statement: of two
   * processes racing for a free lock, the primary key lets exactly one insert, and the update
   * branch only takes over a lease that has run out.
   */
  async tryLock(name: string, holder: string, leaseMs: number): Promise<boolean> {
    const rows = await this.db.query(
      `INSERT INTO bluesky_oauth_locks (name, holder, expires_at) VALUES ($1, $2, now() + $3 * interval '1 millisecond')
       ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
         WHERE bluesky_oauth_locks.expires_at <= now()
       RETURNING holder`,
      [name, holder, leaseMs],
    );
    return rows.length > 0;
  }

  /** Gives the lease back, if it is still ours (a lease that ran out may be someone else's now). */
  async unlock(name: string, holder: string): Promise<void> {
    await this.db.query(`DELETE FROM bluesky_oauth_locks WHERE name = $1 AND holder = $2`, [name, holder]);
  }
}
