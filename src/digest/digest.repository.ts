import { Injectable } from '@nestjs/common';
import { Db, Sql, Tx } from '../database/db';
import type { DigestSummaryRow } from './digest.types';

/** The latest digest of a workspace: its local day and where its window ended. */
export interface LatestDigest {
  localDate: string;
  windowEnd: Date;
}

export interface DigestRecord {
  workspaceId: string;
  localDate: string;
  timezone: string;
  hour: number;
  windowStart: Date;
  windowEnd: Date;
  outcome: 'queued' | 'empty';
  mailId: string | null;
  deadJobs: number;
  failedAttempts: number;
  accountsAttention: number;
}

/**
 * SQL of the digests table: one row per workspace and local day, the exactly-once claim.
 * `local_date` is read as text (YYYY-MM-DD): a DATE has no time zone, and turning it into a JS
 * Date would put one on it.
 */
@Injectable()
export class DigestRepository {
  constructor(private readonly db: Db) {}

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /**
   * Serialises the digest work of one workspace across processes for the rest of the
   * transaction: a transaction-scoped advisory lock (released at commit or rollback, so it
   * also works behind a transaction-mode connection pooler, where session locks would leak).
   * It only saves duplicate work; the UNIQUE (workspace_id, local_date) row is what makes a
   * second digest for a day impossible.
   */
  async lockWorkspace(runner: Sql, workspaceId: string): Promise<void> {
    await runner.query(`SELECT pg_advisory_xact_lock(hashtext('herald.digest'), hashtext($1::text))`, [workspaceId]);
  }

  /** The latest digest of each workspace among `ids` (one index probe each, newest local day). */
  async latest(ids: string[], runner: Sql = this.db): Promise<Map<string, LatestDigest>> {
    if (ids.length === 0) return new Map();
    const rows = await runner.query<{ workspaceId: string; localDate: string; windowEnd: Date }>(
      `SELECT w.id AS "workspaceId", d.local_date::text AS "localDate", d.window_end AS "windowEnd"
       FROM unnest($1::uuid[]) AS w(id)
       JOIN LATERAL (SELECT local_date, window_end FROM digests WHERE workspace_id = w.id ORDER BY local_date DESC LIMIT 1) d ON true`,
      [ids],
    );
    return new Map(rows.map((r) => [r.workspaceId, { localDate: r.localDate, windowEnd: r.windowEnd }]));
  }

  /**
   * Records the digest of a day. ON CONFLICT DO NOTHING: if the day has a row already, nothing
   * is written and false comes back; the caller then rolls back its transaction, mail included.
   */
  async insert(runner: Sql, d: DigestRecord): Promise<boolean> {
    const rows = await runner.query(
      `INSERT INTO digests (workspace_id, local_date, timezone, digest_hour, window_start, window_end, outcome, mail_id,
                            dead_jobs, failed_attempts, accounts_attention)
       VALUES ($1, $2::date, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       ON CONFLICT (workspace_id, local_date) DO NOTHING
       RETURNING id`,
      [
        d.workspaceId,
        d.localDate,
        d.timezone,
        d.hour,
        d.windowStart,
        d.windowEnd,
        d.outcome,
        d.mailId,
        d.deadJobs,
        d.failedAttempts,
        d.accountsAttention,
      ],
    );
    return rows.length > 0;
  }

  /** The workspace's most recent digest, for the settings answer. */
  async last(workspaceId: string): Promise<DigestSummaryRow | null> {
    const rows = await this.db.query<DigestSummaryRow>(
      `SELECT id, local_date::text AS "localDate", window_start AS "windowStart", window_end AS "windowEnd", outcome,
              mail_id AS "mailId", created_at AS "createdAt"
       FROM digests WHERE workspace_id = $1 ORDER BY local_date DESC LIMIT 1`,
      [workspaceId],
    );
    return rows[0] ?? null;
  }
}
