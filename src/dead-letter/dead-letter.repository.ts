import { Injectable } from '@nestjs/common';
import type { Keyset } from '../common/pagination';
import { Db, Sql, Tx } from '../database/db';
import type { AccountStatus } from '../accounts/account.types';
import type { JobPayload, Provider } from '../connectors/connector.interface';
import type { JobStatus } from '../jobs/job.types';
import { JOB_COLUMNS } from '../jobs/jobs.repository';
import { REVIVE_KEY_SQL } from '../queue/sql/revive-dead-jobs';
import type { DlqRow } from './dead-letter.types';

const DLQ_COLUMNS = `${JOB_COLUMNS},
  CASE WHEN j.status IN ('dead', 'discarded') THEN j.finished_at END AS "deadAt",
  (extract(epoch FROM j.finished_at) * 1000000)::bigint::text AS "deadAtMicros",
  j.payload_edited_at AS "payloadEditedAt", j.payload_changed_since_key AS "payloadChangedSinceKey",
  ${REVIVE_KEY_SQL} AS "requeueKey", j.publish_by AS "publishBy",
  a.name AS "accountName", a.status AS "accountStatus", a.status_reason AS "accountStatusReason",
  a.deleted_at IS NOT NULL AS "accountDeleted"`;

export interface DlqFilter {
  accountId?: string;
  provider?: Provider;
  errorClass?: string;
  deadReason?: string;
  from?: Date;
  to?: Date;
  /** Plain text (not a pattern) to find in last_error, case-insensitively. */
  q?: string;
}

/** Keyset of the DLQ list: the shared list keyset, over death time (µs) and id. */
export type DlqKeyset = Keyset;

export interface LockedJob {
  id: string;
  accountId: string;
  status: JobStatus;
  idempotencyKey: string;
  runAt: Date;
  publishBy: Date | null;
}

export interface LockedAccount {
  id: string;
  name: string;
  status: AccountStatus;
  statusReason: string | null;
  deleted: boolean;
}

/** `%`, `_` and `\` are LIKE metacharacters: a search for "100%" means those characters. */
const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * The filter as SQL over `jobs j`, its parameters numbered from `first`. Shared by the list and
 * the bulk requeue, so "requeue what the list shows" is one definition.
 */
function filterSql(f: DlqFilter, first: number): { where: string; params: unknown[] } {
  const n = (i: number) => `$${first + i}`;
  return {
    where: `(${n(0)}::uuid IS NULL OR j.account_id = ${n(0)})
      AND (${n(1)}::text IS NULL OR j.provider = ${n(1)})
      AND (${n(2)}::text IS NULL OR j.error_class = ${n(2)})
      AND (${n(3)}::text IS NULL OR j.dead_reason = ${n(3)})
      AND (${n(4)}::timestamptz IS NULL OR j.finished_at >= ${n(4)})
      AND (${n(5)}::timestamptz IS NULL OR j.finished_at < ${n(5)})
      AND (${n(6)}::text IS NULL OR j.last_error ILIKE '%' || ${n(6)} || '%')`,
    params: [
      f.accountId ?? null,
      f.provider ?? null,
      f.errorClass ?? null,
      f.deadReason ?? null,
      f.from ?? null,
      f.to ?? null,
      f.q === undefined ? null : likeEscape(f.q),
    ],
  };
}

/**
 * SQL of the dead-letter queue: reads of dead and discarded jobs with their account, the row
 * locks its changes take (the audit trail is src/audit's, through AuditService). The changes
 * themselves (edit, requeue, discard) are the queue's operations (JobLifecycle), each guarded by
 * `status = 'dead'` on top of these locks, so whatever races them (a second requeue, a manual
 * retry, a discard) exactly one of them changes the job. Every read and lock is scoped by
 * workspace.
 *
 * Lock order, as everywhere in Herald: job rows first (in id order), then account rows (in id
 * order).
 */
@Injectable()
export class DeadLetterRepository {
  constructor(private readonly db: Db) {}

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /** Newest death first, over the partial index jobs_dlq (workspace_id, finished_at DESC, id DESC). */
  list(workspaceId: string, statuses: JobStatus[], filter: DlqFilter, after: DlqKeyset | null, limit: number): Promise<DlqRow[]> {
    const f = filterSql(filter, 6);
    return this.db.query(
      `SELECT ${DLQ_COLUMNS} FROM jobs j JOIN accounts a ON a.id = j.account_id
       WHERE j.workspace_id = $1 AND j.status = ANY($2::text[])
         AND ($3::bigint IS NULL OR (j.finished_at, j.id) < ('epoch'::timestamptz + $3::bigint * interval '1 microsecond', $4::uuid))
         AND ${f.where}
       ORDER BY j.finished_at DESC, j.id DESC LIMIT $5`,
      [workspaceId, statuses, after?.micros ?? null, after?.id ?? null, limit + 1, ...f.params],
    );
  }

  async find(workspaceId: string, id: string, m?: Sql): Promise<DlqRow | null> {
    const rows: DlqRow[] = await (m ?? this.db).query(
      `SELECT ${DLQ_COLUMNS} FROM jobs j JOIN accounts a ON a.id = j.account_id WHERE j.workspace_id = $1 AND j.id = $2`,
      [workspaceId, id],
    );
    return rows[0] ?? null;
  }

  /** Locks the workspace's jobs among `ids` (any status: the caller reports why one is not dead). */
  lockJobs(m: Sql, workspaceId: string, ids: string[]): Promise<(LockedJob & { payload: JobPayload; provider: Provider })[]> {
    return m.query(
      `SELECT j.id, j.account_id AS "accountId", j.status, j.idempotency_key AS "idempotencyKey", j.run_at AS "runAt",
              j.publish_by AS "publishBy", j.payload, j.provider
       FROM jobs j WHERE j.workspace_id = $1 AND j.id = ANY($2::uuid[]) ORDER BY j.id FOR UPDATE`,
      [workspaceId, ids],
    );
  }

  /**
   * Locks up to `limit` dead jobs matching the filter. No SKIP LOCKED: a job another request is
   * requeuing right now is waited for, then re-checked (PostgreSQL re-evaluates the WHERE on
   * the row's new version), so it is either taken here or, already requeued, left out.
   * Ordered by id so two bulk requeues lock in the same order and cannot deadlock.
   */
  lockDeadMatching(m: Sql, workspaceId: string, filter: DlqFilter, limit: number): Promise<LockedJob[]> {
    const f = filterSql(filter, 3);
    return m.query(
      `SELECT j.id, j.account_id AS "accountId", j.status, j.idempotency_key AS "idempotencyKey", j.run_at AS "runAt",
              j.publish_by AS "publishBy"
       FROM jobs j WHERE j.workspace_id = $1 AND j.status = 'dead' AND ${f.where}
       ORDER BY j.id LIMIT $2 FOR UPDATE`,
      [workspaceId, limit, ...f.params],
    );
  }

  /**
   * Locks the accounts after the jobs (Herald's lock order). FOR SHARE: their status cannot
   * change until we commit (re-auth and auto-disable take FOR UPDATE), so the target state
   * decided from it still holds at commit; concurrent requeues do not block each other.
   */
  lockAccounts(m: Sql, ids: string[]): Promise<LockedAccount[]> {
    return m.query(
      `SELECT id, name, status, status_reason AS "statusReason", deleted_at IS NOT NULL AS deleted
       FROM accounts WHERE id = ANY($1::uuid[]) ORDER BY id FOR SHARE`,
      [[...new Set(ids)].sort()],
    );
  }

  /**
   * Dead jobs per provider and dead reason, for the DLQ size gauge. Reads the dead rows through
   * the partial jobs_dlq index (dead and discarded jobs only); the metrics layer runs it at most
   * once per refresh interval per process, not once per scrape.
   */
  deadByProviderAndReason(): Promise<{ provider: string; reason: string; n: number }[]> {
    return this.db.query(
      `SELECT provider, dead_reason AS reason, count(*)::int AS n FROM jobs WHERE status = 'dead' GROUP BY provider, dead_reason`,
    );
  }
}
