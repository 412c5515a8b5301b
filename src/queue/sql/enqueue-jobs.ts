import type { JobPayload } from '../../connectors/connector.interface';
import type { NewJob } from '../queue.types';
import { targets } from '../job-lifecycle';

/** A new job's status, or NULL (refused by job_state.status NOT NULL) when the table does not let a job start there. */
const START_STATUS = `CASE WHEN r.status IN (${targets('enqueue', null)
  .map((s) => `'${s}'`)
  .join(', ')}) THEN r.status END`;

/**
 * enqueue (new → scheduled | paused): the jobs of a post, as a data-modifying CTE of the one
 * statement that writes the post (PostsRepository.create embeds it; JobLifecycle.enqueue builds
 * it, so the SQL that inserts jobs and the states they start in stay the queue's).
 *
 * Why a CTE and not a statement of its own: POST /v1/posts writes the post, its jobs, the
 * Idempotency-Key's answer and the wake-up in ONE statement, one network round trip, so an
 * accepted post costs a single commit (measured: 3 round trips per request in all; a
 * transaction of separate statements would add BEGIN, COMMIT and one per table).
 *
 * Two CTEs, `j_payloads` and `j` (the embedding statement counts `j`'s rows): a job is two rows,
 * its payload (job_payloads, written once) and its state (job_state: what the queue updates;
 * migrations/1765600000000-narrow-job-state.ts). One row per target through unnest (one array
 * per column): two INSERTs whatever the number of targets. Each job carries its own copy of the
 * payload, so a later edit of one dead job touches only it. The foreign keys (payload → post,
 * state → payload) are checked at the end of the statement, when the rows they point at exist.
 * Parameters are numbered from `first`, after the embedding statement's own. A status the
 * lifecycle table does not start a job in (anything but scheduled or paused) fails the whole
 * statement: the post is not accepted with a job that skipped the queue.
 */
export function enqueueJobsCte(
  first: number,
  input: { workspaceId: string; postId: string; runAt: Date; publishBy: Date | null; createdAt: Date; jobs: NewJob[] },
  payloadFor: (job: NewJob) => JobPayload,
): { cte: string; params: unknown[] } {
  const p = (i: number) => `$${first + i}`;
  const { jobs } = input;
  const rows = `unnest(${p(5)}::uuid[], ${p(6)}::uuid[], ${p(7)}::text[], ${p(8)}::text[], ${p(9)}::text[], ${p(10)}::text[], ${p(11)}::jsonb[])
           AS r(id, account_id, provider, status, idempotency_key, text_override, payload)`;
  return {
    cte: `j_payloads AS (
         INSERT INTO job_payloads (id, workspace_id, post_id, account_id, provider, idempotency_key, text_override, payload, created_at)
         SELECT r.id, ${p(0)}::uuid, ${p(1)}::uuid, r.account_id, r.provider, r.idempotency_key, r.text_override, r.payload, ${p(4)}::timestamptz
         FROM ${rows}
       ), j AS (
         INSERT INTO job_state (job_id, account_id, workspace_id, status, run_at, publish_by, updated_at)
         SELECT r.id, r.account_id, ${p(0)}::uuid, ${START_STATUS}, ${p(2)}::timestamptz, ${p(3)}::timestamptz, ${p(4)}::timestamptz
         FROM ${rows}
         RETURNING 1
       )`,
    params: [
      input.workspaceId,
      input.postId,
      input.runAt,
      input.publishBy,
      input.createdAt,
      jobs.map((j) => j.id),
      jobs.map((j) => j.accountId),
      jobs.map((j) => j.provider),
      jobs.map((j) => j.status),
      jobs.map((j) => j.idempotencyKey),
      jobs.map((j) => j.textOverride),
      jobs.map((j) => JSON.stringify(payloadFor(j))),
    ],
  };
}
