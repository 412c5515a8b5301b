import { Injectable } from '@nestjs/common';
import { knownMigrationNames } from '../database/data-source';
import { Db, isConnectionError } from '../database/db';

/** How long the database may take to answer a readiness probe before it counts as down. */
export const PING_TIMEOUT_MS = 2_000;

/**
 * What /health/ready checks, each answering null when fine or what is wrong (never a secret:
 * no connection string, no server message that could quote one).
 */
@Injectable()
export class ReadinessService {
  constructor(private readonly db: Db) {}

  async database(): Promise<string | null> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`no answer within ${PING_TIMEOUT_MS} ms`), PING_TIMEOUT_MS);
    });
    const ping = this.db.prepared('herald_ping', 'SELECT 1').then(
      () => null,
      (err: unknown) => (isConnectionError(err) ? 'unreachable' : 'the ping query failed'),
    );
    try {
      return await Promise.race([ping, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Read at every probe (one small table): a database restored from an older backup under a
   * running Herald lacks migrations this build needs, and readiness must say so.
   */
  async migrations(): Promise<string | null> {
    try {
      const rows = await this.db.prepared<{ name: string }>('herald_applied_migrations', `SELECT name FROM migrations`);
      const applied = new Set(rows.map((r) => r.name));
      return knownMigrationNames().every((n) => applied.has(n)) ? null : 'migrations are pending';
    } catch (err) {
      return isConnectionError(err) ? 'the database is unreachable' : 'the migrations table could not be read';
    }
  }
}
