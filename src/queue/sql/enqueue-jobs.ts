import type { JobPayload } from '../../connectors/connector.interface';
import { Cte, cte, join, param, raw, sql, SqlPiece } from '../../database/statement';
import type { NewJob } from '../queue.types';
import { targets } from '../job-lifecycle';

const STARTS = raw(
  targets('enqueue', null)
    .map((s) => `'${s}'`)
    .join(', '),
);

/**
 * A new job's status, or NULL (refused by job_state.status NOT NULL) when the table does not let
 * a job start there, or when one of the caller's `guards` (boolean pieces) is not true.
 */
function startStatus(guards: readonly SqlPiece[]): SqlPiece {
  if (guards.length === 0) return sql`CASE WHEN r.status IN (${STARTS}) THEN r.status END`;
  return sql`CASE WHEN r.status IN (${STARTS}) AND (${join(guards, ') AND (')}) THEN r.status END`;
}

/**
 * The statement failed on a job's status refused by `startStatus` (job_state.status NOT NULL,
 * SQLSTATE 23502): nothing of it was written. With a guard, that is the guard saying no.
 */
export function isRefusedStart(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; table?: unknown; column?: unknown };
  return e.code === '23502' && e.table === 'job_state' && e.column === 'status';
}

/** A new post's jobs, and the guards its statement checks before writing them. */
export interface EnqueueInput {
  workspaceId: string;
  postId: string;
  runAt: Date;
  publishBy: Date | null;
  createdAt: Date;
  jobs: NewJob[];
  guards?: readonly SqlPiece[];
}

/** The jobs of a post as CTEs for the post's statement to embed: `ctes` in order, and `rows`, one row per job written (to count them). */
export interface EnqueuedJobs {
  ctes: [Cte<'j_payloads'>, Cte<'j'>];
  rows: Cte<'j'>;
  /** Written only if the caller's guard holds (its statement has another text: another prepared name). */
  guarded: boolean;
}

/**
 * enqueue (new → scheduled | paused): the jobs of a post, as data-modifying CTEs of the one
 * statement that writes the post (PostsRepository.create embeds them; JobLifecycle.enqueue
 * builds them, so the SQL that inserts jobs and the states they start in stay the queue's). The
 * statement is composed by database/statement.ts, which numbers every piece's parameters: this
 * one does not know how many the post's own part has.
 *
 * Why a CTE and not a statement of its own: POST /v1/posts writes the post, its jobs, the
 * Idempotency-Key's answer and the wake-up in ONE statement, one network round trip, so an
 * accepted post costs a single commit (measured: 3 round trips per request in all; a
 * transaction of separate statements would add BEGIN, COMMIT and one per table).
 *
 * Two CTEs, `j_payloads` and `j` (the embedding statement counts `j`'s rows): a job is two rows,
 * its payload (job_payloads, written once) and its state (job_state: what the queue updates;
 * migrations/1765600000000-narrow-job-state.ts). One row per target through unnest (one array
 * per column): two INSERTs whatever the number of
 * targets, and a text that does not change with it (one prepared statement). Each job carries
 * its own copy of the payload, so a later edit of one dead job touches only it. The foreign keys
 * (payload → post, state → payload) are checked at the end of the statement, when the rows they
 * point at exist. A status the lifecycle table does not start a job in (anything but scheduled
 * or paused) fails the whole statement: the post is not accepted with a job that skipped the queue.
 * So does a guard that is not true: the posts module writes a post on the accounts as this
 * process last read them, and the guard (the accounts' and the approval setting's own pieces)
 * checks in this statement that they still are; `isRefusedStart` tells the caller it said no.
 */
export function enqueueJobsCte(input: EnqueueInput, payloadFor: (job: NewJob) => JobPayload): EnqueuedJobs {
  const { jobs } = input;
  const workspace = param(input.workspaceId);
  const created = param(input.createdAt);
  // One array per column, each sent once and read by both INSERTs.
  const id = param(jobs.map((j) => j.id));
  const account = param(jobs.map((j) => j.accountId));
  const provider = param(jobs.map((j) => j.provider));
  const status = param(jobs.map((j) => j.status));
  const key = param(jobs.map((j) => j.idempotencyKey));
  const override = param(jobs.map((j) => j.textOverride));
  const payload = param(jobs.map((j) => JSON.stringify(payloadFor(j))));
  const rows = sql`unnest(${id}::uuid[], ${account}::uuid[], ${provider}::text[], ${status}::text[], ${key}::text[], ${override}::text[], ${payload}::jsonb[])
           AS r(id, account_id, provider, status, idempotency_key, text_override, payload)`;
  const payloads = cte(
    'j_payloads',
    sql`INSERT INTO job_payloads (id, workspace_id, post_id, account_id, provider, idempotency_key, text_override, payload, created_at)
         SELECT r.id, ${workspace}::uuid, ${param(input.postId)}::uuid, r.account_id, r.provider, r.idempotency_key, r.text_override, r.payload, ${created}::timestamptz
         FROM ${rows}`,
  );
  const state = cte(
    'j',
    sql`INSERT INTO job_state (job_id, account_id, workspace_id, status, run_at, publish_by, updated_at)
         SELECT r.id, r.account_id, ${workspace}::uuid, ${startStatus(input.guards ?? [])}, ${param(input.runAt)}::timestamptz, ${param(input.publishBy)}::timestamptz, ${created}::timestamptz
         FROM ${rows}
         RETURNING 1`,
  );
  return { ctes: [payloads, state], rows: state, guarded: (input.guards ?? []).length > 0 };
}
