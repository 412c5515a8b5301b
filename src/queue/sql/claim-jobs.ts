import type { Tx } from '../../database/db';
import { guard } from '../job-lifecycle';
import type { ClaimedJob } from '../queue.types';

/**
 * claim (scheduled → in_progress): the jobs the plan picked become this worker's, with a lease.
 *
 * The rows were locked by the candidate scan in this same transaction, so the guard cannot fail
 * for them; it is there so no other state could ever be claimed. attempt_count counts the
 * attempt this claim starts (a release gives it back). Everything the attempt needs comes back
 * in the same statement (payload, a thread's parts already published, the previous outcome LinkedIn reads, the account's credentials
 * version and retry policy), so starting an attempt costs no further query.
 */
const SQL = `UPDATE job_state j SET status = 'in_progress', lease_owner = $2,
                    lease_expires_at = now() + $3 * interval '1 millisecond',
                    attempt_count = j.attempt_count + 1, updated_at = now()
             FROM accounts a, job_payloads p
             WHERE j.job_id = ANY($1::uuid[]) AND a.id = j.account_id AND p.id = j.job_id AND ${guard('claim', 'j.status')}
             RETURNING j.job_id AS id, p.post_id AS "postId", j.account_id AS "accountId", j.workspace_id AS "workspaceId",
                       p.provider, p.idempotency_key AS "idempotencyKey", j.attempt_count AS "attemptNumber",
                       j.attempt_count - 1 - j.attempt_base AS "attemptsInBudget", p.payload, j.parts AS published,
                       j.publish_by AS "publishBy",
                       j.error_class AS "previousErrorClass", j.last_http_status AS "previousHttpStatus",
                       j.last_network_error AS "previousNetworkError", a.credentials_version AS "credentialsVersion",
                       a.retry_policy AS "retryPolicy", a.max_in_flight AS "maxInFlight", now() AS "claimedAt"`;

export function claimJobs(tx: Tx, owner: string, ids: string[], leaseMs: number): Promise<ClaimedJob[]> {
  return tx.prepared<ClaimedJob>('herald_claim_jobs', SQL, [ids, owner, leaseMs]);
}
