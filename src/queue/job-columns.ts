/**
 * SQL for reading the jobs table (its owner is the queue: every statement that writes it is in
 * ./sql). These are expressions over `jobs j` for the modules that read jobs: the job and
 * dead-letter views.
 *
 * Why each index of `jobs` exists, the statement it serves (docs/benchmarks.md "Writes per
 * delivery": every status change writes a new row version and an entry in each index whose
 * predicate the new version matches, so each one here is paid for on the hot path):
 *
 * | index                                  | serves                                                                                  |
 * |----------------------------------------|-----------------------------------------------------------------------------------------|
 * | jobs_pkey (id)                         | every statement by job id: record, extend leases, the job and DLQ views, attempts' FK   |
 * | jobs_post_id_account_id_key (unique)   | one job per post and account (intake); a post's jobs (posts views, cancel by post)      |
 * | jobs_ready_account (account_id, run_at) WHERE scheduled | the claim's per-account scan and its skip scan over accounts (claim-candidates.ts) |
 * | jobs_ready (run_at) WHERE scheduled    | the next wake-up (nextScheduledRunAt), the due/later counts and the oldest due age (metrics) |
 * | jobs_in_progress (account_id, lease_expires_at) WHERE in_progress | in-flight counts per account (claim, in-flight-counts.ts), reclaim of expired leases |
 * | jobs_paused_account (account_id) WHERE paused | resume by account (resume-jobs.ts) when a person fixes the account                |
 * | jobs_publish_by (publish_by) WHERE scheduled/paused and set | the deadline sweep (expire-deadlines.ts)                         |
 * | jobs_dlq (workspace_id, finished_at DESC, id DESC) WHERE dead/discarded | the dead-letter list's pages and counts (dead-letter.repository.ts) |
 *
 * `attempts`: its primary key (id), `(job_id, number)` unique (one row per attempt number; a
 * job's history in order), and a BRIN on finished_at (the digest's and reports' time ranges).
 */

/** A job row's columns, as JobRow (jobs/job.types.ts) names them. */
export const JOB_COLUMNS = `
  j.id, j.post_id AS "postId", j.account_id AS "accountId", j.workspace_id AS "workspaceId", j.provider, j.status,
  j.run_at AS "runAt", j.attempt_count AS "attemptCount", j.attempt_base AS "attemptBase",
  j.idempotency_key AS "idempotencyKey", j.text_override AS "textOverride", j.payload,
  j.error_class AS "errorClass", j.last_error AS "lastError", j.dead_reason AS "deadReason",
  j.remote_id AS "remoteId", j.remote_url AS "remoteUrl", j.created_at AS "createdAt", j.updated_at AS "updatedAt",
  j.finished_at AS "finishedAt", j.parts`;

/**
 * The idempotency key a dead job goes back to the queue with: a new one iff its payload was
 * edited (PATCH /v1/dlq/:jobId) since the current key was issued, else the same (docs/dead-letter-queue.md:
 * receivers may have cached their answer to the old key). New keys are `<jobId>.<n>`, n = 2, 3,
 * … (a job's first key is its id): unique because job ids are, readable in a receiver's logs,
 * and within Bluesky's record-key alphabet. Also read by the DLQ's detail view, which announces
 * the key a requeue would send.
 */
export const REVIVE_KEY_SQL = `CASE WHEN j.payload_changed_since_key
  THEN j.id::text || '.' || (coalesce(substring(j.idempotency_key from '\\.(\\d+)$')::int, 1) + 1)
  ELSE j.idempotency_key END`;
