import { Injectable } from '@nestjs/common';
import { Db } from '../database/db';
import { EmbeddedRead, param, sql, SqlPiece } from '../database/statement';
import type { ThrottleState } from './login-throttle';

const STATE = `failures, last_failure_at AS "lastFailureAt", blocked_until AS "blockedUntil"`;

/**
 * SQL of login_throttle (settings_login_throttle until migration 1765910000000): the counts of
 * wrong keys and passwords per client address, per login address and per person, kept in
 * PostgreSQL so that every Herald process applies one count (LoginThrottleService decides what
 * is counted; login-throttle.ts how).
 *
 * Every statement here is one autocommit statement: no transaction is held open across a
 * password or key check, and no row is locked while anything else happens. A count moves by
 * compare-and-set (the row is written only if it still holds the state the caller read), so two
 * processes counting the same client at once never lose a failure: the loser reads again.
 * (The earlier design, SELECT … FOR UPDATE around the check, held a pooled connection per
 * waiting request; a flood of 40 wrong keys from one client took the pool from everyone else.)
 */
@Injectable()
export class LoginThrottleRepository {
  constructor(private readonly db: Db) {}

  /**
   * The counts of these keys (a client address, a login address…); keys without one are absent.
   * Prepared: planned once per connection, not on every request with an API key.
   */
  async peek(keys: string[]): Promise<Map<string, ThrottleState>> {
    const rows = await this.db.prepared<ThrottleState & { key: string }>(
      'herald_login_throttle_peek_many',
      `SELECT client AS key, ${STATE} FROM login_throttle WHERE client = ANY($1::text[])`,
      [keys],
    );
    return new Map(rows.map(({ key, ...state }) => [key, state]));
  }

  /**
   * `peek` as a read another module's statement carries (database/statement.ts EmbeddedRead): the
   * API key guard reads a key and its client's count in one statement, one round trip and one
   * pooled connection per request instead of two. The counts come as JSON, times in epoch
   * milliseconds (what a Date holds: the row path's parser drops microseconds the same way), so
   * the compare-and-set that may follow compares the same values either way.
   */
  peekRead(keys: string[]): ThrottleRead {
    return new ThrottleRead(
      sql`(SELECT coalesce(json_agg(json_build_object('key', client, 'failures', failures,
                'lastFailureAt', floor(extract(epoch FROM last_failure_at) * 1000), 'blockedUntil', floor(extract(epoch FROM blocked_until) * 1000))), '[]'::json)
           FROM login_throttle WHERE client = ANY(${param(keys)}::text[]))`,
    );
  }

  /**
   * Writes `next` for `key` if the row still holds `seen` (null: there is no row yet). False when
   * another request moved the count first: the caller reads it again and retries.
   */
  async compareAndSet(key: string, seen: ThrottleState | null, next: ThrottleState): Promise<boolean> {
    const rows =
      seen === null
        ? await this.db.prepared(
            'herald_login_throttle_insert',
            `INSERT INTO login_throttle (client, failures, last_failure_at, blocked_until) VALUES ($1, $2, $3, $4)
             ON CONFLICT (client) DO NOTHING RETURNING 1`,
            [key, next.failures, next.lastFailureAt, next.blockedUntil],
          )
        : await this.db.prepared(
            'herald_login_throttle_cas',
            `UPDATE login_throttle SET failures = $2, last_failure_at = $3, blocked_until = $4
             WHERE client = $1 AND failures = $5 AND last_failure_at IS NOT DISTINCT FROM $6 RETURNING 1`,
            [key, next.failures, next.lastFailureAt, next.blockedUntil, seen.failures, seen.lastFailureAt],
          );
    return rows.length > 0;
  }

  /** Forgets these counts (what a success proved). */
  async clear(keys: string[]): Promise<void> {
    await this.db.query(`DELETE FROM login_throttle WHERE client = ANY($1::text[])`, [keys]);
  }

  /**
   * Deletes counts whose last failure is older than `before`: the caller passes the window after
   * which a count starts again (login-throttle.ts WINDOW_MS), past which a row changes nothing
   * (its block ended long before). Rows with no failure at all (left by older versions) go too.
   */
  async purgeQuiet(before: Date): Promise<number> {
    const rows = await this.db.query(`DELETE FROM login_throttle WHERE last_failure_at IS NULL OR last_failure_at < $1 RETURNING 1`, [
      before,
    ]);
    return rows.length;
  }
}

/** The counts a carrying statement read for LoginThrottleService (null until it answered). */
export class ThrottleRead implements EmbeddedRead {
  readonly name = 'throttle';
  states: Map<string, ThrottleState> | null = null;

  constructor(readonly piece: SqlPiece) {}

  take(value: unknown): void {
    const rows = (Array.isArray(value) ? value : []) as {
      key: string;
      failures: number;
      lastFailureAt: number | null;
      blockedUntil: number | null;
    }[];
    const at = (ms: number | null) => (ms === null ? null : new Date(ms));
    this.states = new Map(
      rows.map((r) => [r.key, { failures: r.failures, lastFailureAt: at(r.lastFailureAt), blockedUntil: at(r.blockedUntil) }]),
    );
  }
}
