import { Inject, Injectable } from '@nestjs/common';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { linkedInSunset, linkedInVersionNotice } from '../config/linkedin-versions';
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
  constructor(
    private readonly db: Db,
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
  ) {}

  /** The configured LinkedIn API version, its sunset (published, or the earliest possible) and the warning, if due. */
  linkedInVersion(now: Date): { version: string; sunset: string; warning: string | null } {
    const version = this.config.linkedin.apiVersion;
    return {
      version,
      sunset: linkedInSunset(version).date.toISOString().slice(0, 10),
      warning: linkedInVersionNotice(version, now)?.message ?? null,
    };
  }

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
