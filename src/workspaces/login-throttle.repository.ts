import { Injectable } from '@nestjs/common';
import { Db } from '../database/db';
import type { ThrottleState } from './login-throttle';

/**
 * SQL of settings_login_throttle: the wrong-key (and wrong-password) counts per client and per
 * address, kept in PostgreSQL so that every Herald process applies one count. The page's logins
 * and the API's Bearer keys both use it (LoginThrottleService).
 */
@Injectable()
export class LoginThrottleRepository {
  constructor(private readonly db: Db) {}

  /**
   * The state of one count, without locking (the API's fast path: every request with a key);
   * null when there is none. Prepared: planned once per connection, not on every request.
   */
  async peek(client: string): Promise<ThrottleState | null> {
    const rows = await this.db.prepared<ThrottleState>(
      'herald_login_throttle_peek',
      `SELECT failures, last_failure_at AS "lastFailureAt", blocked_until AS "blockedUntil" FROM settings_login_throttle WHERE client = $1`,
      [client],
    );
    return rows[0] ?? null;
  }

  /** Counts that have been quiet for a day (a count restarts after 15 minutes anyway). */
  async purgeQuiet(): Promise<void> {
    await this.db.query(`DELETE FROM settings_login_throttle WHERE last_failure_at < now() - interval '1 day'`);
  }

  /**
   * Like withThrottle, for several counts at once (a password login counts per client and per
   * address): their rows are locked in key order, so two logins never wait for each other in
   * a cycle. `work` gets the states in the order of `keys` and returns the next ones likewise.
   */
  async withThrottles<T>(
    keys: string[],
    work: (states: ThrottleState[]) => Promise<{ result: T; next: (ThrottleState | null)[] }>,
  ): Promise<T> {
    return this.db.transaction(async (m) => {
      const byKey = new Map<string, ThrottleState>();
      for (const key of [...new Set(keys)].sort()) {
        await m.query(`INSERT INTO settings_login_throttle (client) VALUES ($1) ON CONFLICT (client) DO NOTHING`, [key]);
        const [state] = await m.query<ThrottleState>(
          `SELECT failures, last_failure_at AS "lastFailureAt", blocked_until AS "blockedUntil"
           FROM settings_login_throttle WHERE client = $1 FOR UPDATE`,
          [key],
        );
        byKey.set(key, state);
      }
      const { result, next } = await work(keys.map((k) => byKey.get(k)!));
      for (const [i, key] of keys.entries()) {
        const state = next[i];
        if (state === null) await m.query(`DELETE FROM settings_login_throttle WHERE client = $1`, [key]);
        else
          await m.query(`UPDATE settings_login_throttle SET failures = $2, last_failure_at = $3, blocked_until = $4 WHERE client = $1`, [
            key,
            state.failures,
            state.lastFailureAt,
            state.blockedUntil,
          ]);
      }
      return result;
    });
  }

  /**
   * Runs `work` holding the row lock of this client's throttle row (created when missing), so
   * concurrent logins from one client take turns: each sees the count the previous one left.
   * `work` returns the state to keep, or null to forget the client (a correct key).
   */
  async withThrottle<T>(client: string, work: (state: ThrottleState) => Promise<{ result: T; next: ThrottleState | null }>): Promise<T> {
    return this.db.transaction(async (m) => {
      await m.query(`INSERT INTO settings_login_throttle (client) VALUES ($1) ON CONFLICT (client) DO NOTHING`, [client]);
      const [state] = await m.query<ThrottleState>(
        `SELECT failures, last_failure_at AS "lastFailureAt", blocked_until AS "blockedUntil"
         FROM settings_login_throttle WHERE client = $1 FOR UPDATE`,
        [client],
      );
      const { result, next } = await work(state);
      if (next === null) {
        await m.query(`DELETE FROM settings_login_throttle WHERE client = $1`, [client]);
      } else {
        await m.query(`UPDATE settings_login_throttle SET failures = $2, last_failure_at = $3, blocked_until = $4 WHERE client = $1`, [
          client,
          next.failures,
          next.lastFailureAt,
          next.blockedUntil,
        ]);
      }
      return result;
    });
  }
}
