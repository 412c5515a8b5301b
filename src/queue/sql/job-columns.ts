/**
 * SQL for reading jobs. A job is two rows (migrations/1765600000000-narrow-job-state.ts):
 * `job_payloads` (what it sends: payload, idempotency key, text override; written once, then
 * only by a reschedule or a dead-letter edit or revival) and `job_state` (where it stands:
 * status, run_at, lease, attempt counts, last outcome; what a claim and a record update).
 * The view `jobs` joins them, one row per job with the old table's columns. Every statement on
 * these tables and on `attempts`, reads included, is a file of ./sql: the writes behind
 * JobLifecycle and JobStore, the reads behind JobReads (the job and dead-letter views, a post's
 * jobs and status, the digest's and alerts' reports). Other modules receive rows, never these
 * expressions (architecture.json "tables": the check refuses a read of them outside src/queue).
 *
 * Why each index exists, the statement it serves (docs/benchmarks.md "Writes per delivery":
 * every status change writes a new version of the state row and an entry in each of its
 * indexes whose predicate the new version matches, so each one on job_state is paid for on
 * the hot path; job_payloads' are written once, at intake):
 *
 * | index                                  | serves                                                                                  |
 * |----------------------------------------|-----------------------------------------------------------------------------------------|
 * | job_state_pkey (job_id)                | every statement by job id: record, extend leases, the job and DLQ views, attempts' FK   |
 * | jobs_ready_account (account_id, run_at) WHERE scheduled | the claim's per-account scan and its skip scan over accounts (claim-candidates.ts) |
 * | jobs_ready (run_at) WHERE scheduled    | the next wake-up (next-run-at.ts), the due/later counts and the oldest due age (queue-depth.ts) |
 * | jobs_in_progress (account_id, lease_expires_at) WHERE in_progress | in-flight counts per account (claim, in-flight-counts.ts), reclaim of expired leases |
 * | jobs_paused_account (account_id) WHERE paused | resume by account (resume-jobs.ts) when a person fixes the account                |
 * | jobs_publish_by (publish_by) WHERE scheduled/paused and set | the deadline sweep (expire-deadlines.ts)                         |
 * | jobs_dlq (workspace_id, finished_at DESC, job_id DESC) WHERE dead/discarded | the dead-letter list's pages and counts (read-dead-jobs.ts)      |
 * | job_payloads_pkey (id)                 | the claim's and the views' join from a state row to its payload                          |
 * | jobs_post_id_account_id_key (unique)   | one job per post and account (intake); a post's jobs (posts views, cancel by post)      |
 * | job_payloads_id_account_workspace_key (unique) | job_state's composite foreign key: its copies of account and workspace are the job's |
 *
 * `attempts`: its primary key (id), `(job_id, number)` unique (one row per attempt number; a
 * job's history in order), and a BRIN on finished_at (the digest's and reports' time ranges).
 * Its foreign key points at job_state (the lock it takes lands on a page the record writes anyway).
 */

/** A job row's columns from the view `jobs j`, as JobRow (job-reads.types.ts) names them. */
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
 * and within Bluesky's record-key alphabet. Written by revive-dead-jobs.ts; read by the DLQ's
 * views (read-dead-jobs.ts), which announce the key a requeue would send: one expression for both.
 */
export const REVIVE_KEY_SQL = `CASE WHEN j.payload_changed_since_key
  THEN j.id::text || '.' || (coalesce(substring(j.idempotency_key from '\\.(\\d+)$')::int, 1) + 1)
  ELSE j.idempotency_key END`;
