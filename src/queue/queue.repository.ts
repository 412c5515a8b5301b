import { Injectable } from '@nestjs/common';
import { Db, Tx } from '../database/db';
import type { RetryPolicyOverride } from '../accounts/account.types';
import type { JobPayload, Provider } from '../connectors/connector.interface';
import type { Circuit, CircuitStateName } from '../retry/circuit-breaker';
import type { DeadReason, Decision } from '../retry/decide';
import type { ErrorClass } from '../retry/error-class';
import { AccountSlot, Candidate, ClaimPlan } from './claim-plan';

/** A job as a claim hands it to the worker: leased to it until leaseExpiresAt. */
export interface ClaimedJob {
  id: string;
  postId: string;
  accountId: string;
  workspaceId: string;
  provider: Provider;
  idempotencyKey: string;
  /** The number of the attempt this claim starts (1-based, whole history). */
  attemptNumber: number;
  /** Attempts of the current budget before this one (a requeue starts a new budget). */
  attemptsInBudget: number;
  payload: JobPayload;
  publishBy: Date | null;
  previousErrorClass: ErrorClass | null;
  previousHttpStatus: number | null;
  previousNetworkError: string | null;
  credentialsVersion: number;
  retryPolicy: RetryPolicyOverride | null;
  /** The account's cap on attempts running at once. */
  maxInFlight: number;
  claimedAt: Date;
}

/** One finished attempt, as the worker reports it. */
export interface FinishedAttempt {
  jobId: string;
  accountId: string;
  attemptNumber: number;
  idempotencyKey: string;
  startedAt: Date;
  finishedAt: Date;
  httpStatus: number | null;
  networkError: string | null;
  errorClass: ErrorClass;
  message: string | null;
  responseExcerpt: string | null;
  decision: Decision;
  /** For `retry`: wait before the next attempt, added to the database clock. */
  delayMs: number | null;
  deadReason: DeadReason | null;
  remoteId: string | null;
  remoteUrl: string | null;
  warnings: string[];
}

/** What one round did. */
export interface RoundResult {
  /** Jobs whose finished attempt was recorded (others had lost their lease). */
  recorded: Set<string>;
  claimed: ClaimedJob[];
  /** Accounts not active after this round: their waiting jobs must be paused. */
  notActive: string[];
}

/** What the completion decided for one account, under its row lock. */
export interface AccountFeedback {
  circuit: Circuit;
  opened: boolean;
  lastError: string | null;
  succeeded: boolean;
  /** A new status for the account, with the reason shown to people. */
  status: { value: 'needs_reauth' | 'disabled'; reason: string } | null;
}

export interface LockedAccount {
  id: string;
  status: string;
  circuit: Circuit;
}

interface CircuitRow {
  id: string;
  status: string;
  circuitState: CircuitStateName;
  circuitOpenUntil: Date | null;
  consecutiveFailures: number;
}

const toCircuit = (r: CircuitRow): Circuit => ({
  state: r.circuitState,
  openUntil: r.circuitOpenUntil,
  consecutiveFailures: r.consecutiveFailures,
});

/** The claim's candidate scan (exported for the claim-scaling benchmark, which times it). */
export const CLAIM_CANDIDATES_SQL = `SELECT c.id, a.id AS "accountId", now() AS now
             FROM (
               SELECT a.id, CASE WHEN f.others > 0 THEN 0 ELSE a.max_in_flight * $3 - f.total END AS free
               FROM accounts a
               CROSS JOIN LATERAL (
                 SELECT count(*) AS total, count(*) FILTER (WHERE x.lease_owner <> $2) AS others
                 FROM jobs x WHERE x.account_id = a.id AND x.status = 'in_progress'
               ) f
               WHERE a.status = 'active' AND a.deleted_at IS NULL
                 AND (a.circuit_state = 'closed' OR a.circuit_open_until <= now())
             ) a
             CROSS JOIN LATERAL (
               SELECT j.id, j.run_at FROM jobs j
               WHERE j.account_id = a.id AND j.status = 'scheduled' AND j.run_at <= now()
                 AND (j.publish_by IS NULL OR j.publish_by >= now())
               ORDER BY j.run_at
               LIMIT greatest(a.free, 0)
               FOR UPDATE SKIP LOCKED
             ) c
             WHERE a.free > 0
             ORDER BY c.run_at
             LIMIT $1`;

/**
 * The queue's hand-written SQL. One method per operation; each says why it is written so.
 *
 * Lock order, everywhere in Herald: job rows first, then account rows (in id order). The
 * claim, the completion and the account API all follow it, so they cannot deadlock.
 * No transaction is ever open across an HTTP call: a claim commits before delivery starts,
 * and a completion is a new, short transaction.
 */
@Injectable()
export class QueueRepository {
  constructor(private readonly db: Db) {}

  /**
   * One round of the worker, in ONE transaction: record the attempts that finished, then
   * claim up to `claimLimit` due jobs. Doing both together frees the in-flight slots of the
   * finished attempts for this very claim, and costs one commit per round instead of two.
   *
   * 1. The finished attempts: one statement moves every job on and inserts its attempt row.
   *    It is guarded by the lease (owner and attempt number): a worker whose lease expired
   *    and whose job was claimed again cannot overwrite the newer owner's state, and its
   *    attempt row is not written (the newer attempt carries the same idempotency key).
   *    Retry times use the database clock, the clock the claim compares with.
   * 2. Candidates: due `scheduled` jobs in run_at order, only of accounts that could take an
   *    attempt now (active, circuit closed or cooled down, below their in-flight cap), so a
   *    saturated or tripped account's backlog does not crowd out the others. The scan uses the
   *    partial index `jobs_ready` (status = 'scheduled'), which holds waiting jobs only:
   *    finished and dead jobs never slow it down. `FOR UPDATE SKIP LOCKED` lets concurrent
   *    claimers (other processes) take disjoint rows without waiting on each other.
   * 3. Every account involved (of the finished attempts and of the candidates), locked
   *    `FOR UPDATE` in id order. Job rows are always locked before account rows, and accounts
   *    in id order, everywhere in Herald, so rounds of several processes cannot deadlock.
   *    Under these locks the in-flight cap and the single half-open probe are exact across
   *    processes (a concurrent round waits for our commit and then sees our leases).
   * 4. `feedback` (pure: account-feedback.ts) folds the recorded outcomes into each account's
   *    circuit and status, written back in one statement.
   * 5. In-flight counts; `plan` (pure: claim-plan.ts) picks the jobs; they become
   *    `in_progress` with a lease; a probe moves its circuit to half_open until the lease ends.
   */
  async round(input: {
    owner: string;
    finished: FinishedAttempt[];
    /** Claimed jobs this worker will not attempt after all: back to the queue, no attempt spent. */
    release: { id: string; attemptNumber: number }[];
    claimLimit: number;
    /** Jobs leased per in-flight slot of an account (see candidates()). */
    prefetch: number;
    leaseMs: number;
    feedback: (accounts: LockedAccount[], recorded: FinishedAttempt[]) => Map<string, AccountFeedback>;
    plan: (candidates: Candidate[], accounts: Map<string, AccountSlot>, now: Date) => ClaimPlan;
  }): Promise<RoundResult> {
    const { owner, finished, claimLimit, leaseMs, prefetch } = input;
    return this.db.transaction(async (client) => {
      // Statements whose results are not needed before the next one go out together (the pool
      // runs in pipeline mode, see Db): 4 round trips per round instead of 9. BEGIN travels
      // with the first of them.
      const [, recorded, candidates] = await Promise.all([
        input.release.length > 0 ? this.releaseIn(client, owner, input.release) : Promise.resolve(),
        this.record(client, owner, finished),
        claimLimit > 0 ? this.candidates(client, claimLimit, owner, prefetch) : Promise.resolve([]),
      ]);
      const kept = finished.filter((a) => recorded.has(a.jobId));
      const accountIds = [...new Set([...kept.map((a) => a.accountId), ...candidates.map((c) => c.accountId)])].sort();
      const locked = accountIds.length > 0 ? await this.lockAccounts(client, accountIds) : [];

      const involved = new Set(kept.map((a) => a.accountId));
      const decided = kept.length > 0 ? input.feedback(locked.filter((a) => involved.has(a.id)), kept) : new Map<string, AccountFeedback>();
      for (const a of locked) {
        const d = decided.get(a.id);
        if (d) a.circuit = d.circuit; // the plan must see the circuits as this round leaves them
      }
      const statusChanged = [...decided].filter(([, d]) => d.status !== null).map(([id]) => id);
      const usable = locked.filter((a) => a.status === 'active' && !a.deleted && !statusChanged.includes(a.id));
      const [counts] = await Promise.all([
        candidates.length > 0 && usable.length > 0
          ? this.inFlightCounts(client, owner, usable.map((a) => a.id))
          : Promise.resolve(new Map<string, { total: number; others: number }>()),
        decided.size > 0 ? this.writeFeedback(client, decided) : Promise.resolve(),
      ]);

      let claimed: ClaimedJob[] = [];
      if (candidates.length > 0 && usable.length > 0) {
        const slots = new Map<string, AccountSlot>(
          usable.map((a) => {
            const c = counts.get(a.id) ?? { total: 0, others: 0 };
            // Leases of another process on this account: it is theirs until they are done.
            const capacity = c.others > 0 ? 0 : a.maxInFlight * prefetch;
            return [a.id, { id: a.id, maxInFlight: capacity, inFlight: c.total, circuit: a.circuit }];
          }),
        );
        const { take, probes } = input.plan(candidates, slots, candidates[0]!.now);
        const [, jobs] = await Promise.all([
          probes.length > 0 ? this.startProbes(client, probes, leaseMs) : Promise.resolve(),
          take.length > 0 ? this.claimJobs(client, owner, take, leaseMs) : Promise.resolve([]),
          client.commit(),
        ]);
        claimed = jobs;
      }
      const inactive = locked.filter((a) => involved.has(a.id) && a.status !== 'active').map((a) => a.id);
      return {
        recorded,
        claimed,
        notActive: [...new Set([...statusChanged, ...inactive])],
      };
    });
  }

  private async candidates(client: Tx, limit: number, owner: string, prefetch: number): Promise<(Candidate & { now: Date })[]> {
    // Per account (active, circuit closed or cooled down), its due jobs in run_at order, at
    // most as many as it has free slots right now; then the earliest `limit` of all. The exact
    // check happens under the account locks (round): this only keeps the rows we lock close to
    // the rows we can take, and a busy account's backlog from crowding out others.
    //
    // An account's jobs are leased by one process at a time (none while another process holds
    // leases on it), up to `prefetch` × its in-flight cap: the worker runs at most the cap at
    // once and starts the next leased job the moment one finishes, without waiting for a
    // database round. Leases, not running attempts, are what the database counts, so the cap
    // holds across processes because only the process holding the leases runs them.
    const rows = await client.prepared<Candidate & { now: Date }>(
      'herald_claim_candidates',
      CLAIM_CANDIDATES_SQL,
      [limit, owner, prefetch],
    );
    return rows;
  }

  private async lockAccounts(client: Tx, ids: string[]): Promise<(LockedAccount & { maxInFlight: number; deleted: boolean })[]> {
    const rows = await client.prepared<CircuitRow & { maxInFlight: number; deleted: boolean }>(
      'herald_lock_accounts',
      `SELECT id, status, circuit_state AS "circuitState", circuit_open_until AS "circuitOpenUntil",
                    consecutive_failures AS "consecutiveFailures", max_in_flight AS "maxInFlight",
                    deleted_at IS NOT NULL AS deleted
             FROM accounts WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE`,
      [ids],
    );
    return rows.map((r) => ({ id: r.id, status: r.status, circuit: toCircuit(r), maxInFlight: r.maxInFlight, deleted: r.deleted }));
  }

  /** Step 1 of a round: returns the jobs whose outcome was recorded. */
  private async record(client: Tx, owner: string, attempts: FinishedAttempt[]): Promise<Set<string>> {
    if (attempts.length === 0) return new Set();
    const col = <K extends keyof FinishedAttempt>(k: K) => attempts.map((a) => a[k]);
    const written = await client.prepared<{ jobId: string }>(
      'herald_record_attempts',
      `WITH r AS (
               SELECT * FROM unnest($2::uuid[], $3::int[], $4::text[], $5::timestamptz[], $6::timestamptz[], $7::int[],
                                    $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::bigint[], $14::text[],
                                    $15::text[], $16::text[], $17::text[])
                 AS r(job_id, number, idempotency_key, started_at, finished_at, http_status, network_error, error_class,
                      message, response_excerpt, decision, delay_ms, dead_reason, remote_id, remote_url, warnings)
             ), done AS (
               UPDATE jobs j SET
                 status = CASE r.decision WHEN 'succeed' THEN 'succeeded' WHEN 'retry' THEN 'scheduled'
                                          WHEN 'pause' THEN 'paused' ELSE 'dead' END,
                 run_at = CASE WHEN r.decision = 'retry' THEN clock_timestamp() + r.delay_ms * interval '1 millisecond' ELSE j.run_at END,
                 error_class = r.error_class,
                 last_error = r.message,
                 last_http_status = r.http_status,
                 last_network_error = r.network_error,
                 dead_reason = r.dead_reason,
                 remote_id = coalesce(r.remote_id, j.remote_id),
                 remote_url = coalesce(r.remote_url, j.remote_url),
                 lease_owner = NULL, lease_expires_at = NULL,
                 finished_at = CASE WHEN r.decision IN ('succeed', 'dead') THEN now() ELSE NULL END,
                 updated_at = now()
               FROM r
               WHERE j.id = r.job_id AND j.status = 'in_progress' AND j.lease_owner = $1 AND j.attempt_count = r.number
               RETURNING j.id, j.run_at
             )
             INSERT INTO attempts (job_id, number, started_at, finished_at, http_status, network_error, error_class, decision,
                                   retry_at, latency_ms, response_excerpt, message, idempotency_key, worker, warnings)
             SELECT r.job_id, r.number, r.started_at, r.finished_at, r.http_status, r.network_error, r.error_class, r.decision,
                    CASE WHEN r.decision = 'retry' THEN done.run_at END,
                    greatest(0, (extract(epoch FROM r.finished_at - r.started_at) * 1000)::int),
                    r.response_excerpt, r.message, r.idempotency_key, $1, r.warnings
             FROM r JOIN done ON done.id = r.job_id
             RETURNING job_id AS "jobId"`,
      [
        owner,
        col('jobId'),
        col('attemptNumber'),
        col('idempotencyKey'),
        col('startedAt'),
        col('finishedAt'),
        col('httpStatus'),
        col('networkError'),
        col('errorClass'),
        col('message'),
        col('responseExcerpt'),
        col('decision'),
        col('delayMs'),
        col('deadReason'),
        col('remoteId'),
        col('remoteUrl'),
        attempts.map((a) => (a.warnings.length > 0 ? a.warnings.join('\n') : null)),
      ],
    );
    return new Set(written.map((w) => w.jobId));
  }

  /** Step 4 of a round: the circuits and statuses `feedback` decided, in one statement. */
  private async writeFeedback(client: Tx, decided: Map<string, AccountFeedback>): Promise<void> {
    const ids = [...decided.keys()];
    const f = [...decided.values()];
    await client.prepared(
      'herald_account_feedback',
      `UPDATE accounts a SET
               circuit_state = u.state, circuit_open_until = u.open_until, consecutive_failures = u.failures,
               circuit_opened_at = CASE WHEN u.opened THEN now() ELSE a.circuit_opened_at END,
               last_error = coalesce(u.last_error, a.last_error),
               last_success_at = CASE WHEN u.succeeded THEN now() ELSE a.last_success_at END,
               status = coalesce(u.status, a.status),
               status_reason = CASE WHEN u.status IS NULL THEN a.status_reason ELSE u.status_reason END
             FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::int[], $5::bool[], $6::text[], $7::bool[], $8::text[], $9::text[])
               AS u(id, state, open_until, failures, opened, last_error, succeeded, status, status_reason)
             WHERE a.id = u.id`,
      [
        ids,
        f.map((x) => x.circuit.state),
        f.map((x) => x.circuit.openUntil),
        f.map((x) => x.circuit.consecutiveFailures),
        f.map((x) => x.opened),
        f.map((x) => x.lastError),
        f.map((x) => x.succeeded),
        f.map((x) => x.status?.value ?? null),
        f.map((x) => x.status?.reason ?? null),
      ],
    );
  }

  /** Leases per account (all, and other processes'), read under the account locks (after step 1). */
  private async inFlightCounts(client: Tx, owner: string, accountIds: string[]): Promise<Map<string, { total: number; others: number }>> {
    const rows = await client.prepared<{ accountId: string; total: number; others: number }>(
      'herald_in_flight',
      `SELECT account_id AS "accountId", count(*)::int AS total, (count(*) FILTER (WHERE lease_owner <> $2))::int AS others
             FROM jobs WHERE status = 'in_progress' AND account_id = ANY($1::uuid[]) GROUP BY account_id`,
      [accountIds, owner],
    );
    return new Map(rows.map((r) => [r.accountId, { total: r.total, others: r.others }]));
  }

  /** Leased jobs this worker gives back unattempted: scheduled again, the claim's attempt number returned. */
  private async releaseIn(client: Tx, owner: string, jobs: { id: string; attemptNumber: number }[]): Promise<void> {
    await client.prepared(
      'herald_release',
      // Back to the queue, or to where its account's state puts it: paused (needs_reauth or
      // disabled: resumed when fixed) or cancelled (the account was deleted meanwhile).
      `UPDATE jobs j SET
                    status = CASE WHEN a.deleted_at IS NOT NULL THEN 'cancelled'
                                  WHEN a.status <> 'active' THEN 'paused' ELSE 'scheduled' END,
                    finished_at = CASE WHEN a.deleted_at IS NOT NULL THEN now() END,
                    lease_owner = NULL, lease_expires_at = NULL,
                    attempt_count = j.attempt_count - 1, updated_at = now()
             FROM unnest($2::uuid[], $3::int[]) AS r(id, number), accounts a
             WHERE j.id = r.id AND a.id = j.account_id
               AND j.status = 'in_progress' AND j.lease_owner = $1 AND j.attempt_count = r.number`,
      [owner, jobs.map((j) => j.id), jobs.map((j) => j.attemptNumber)],
    );
  }

  private async startProbes(client: Tx, accountIds: string[], leaseMs: number): Promise<void> {
    await client.prepared(
      'herald_start_probes',
      `UPDATE accounts SET circuit_state = 'half_open', circuit_open_until = now() + $2 * interval '1 millisecond'
             WHERE id = ANY($1::uuid[])`,
      [accountIds, leaseMs],
    );
  }

  private async claimJobs(client: Tx, owner: string, ids: string[], leaseMs: number): Promise<ClaimedJob[]> {
    const rows = await client.prepared<ClaimedJob>(
      'herald_claim_jobs',
      `UPDATE jobs j SET status = 'in_progress', lease_owner = $2,
                    lease_expires_at = now() + $3 * interval '1 millisecond',
                    attempt_count = j.attempt_count + 1, updated_at = now()
             FROM accounts a
             WHERE j.id = ANY($1::uuid[]) AND a.id = j.account_id
             RETURNING j.id, j.post_id AS "postId", j.account_id AS "accountId", j.workspace_id AS "workspaceId",
                       j.provider, j.idempotency_key AS "idempotencyKey", j.attempt_count AS "attemptNumber",
                       j.attempt_count - 1 - j.attempt_base AS "attemptsInBudget", j.payload, j.publish_by AS "publishBy",
                       j.error_class AS "previousErrorClass", j.last_http_status AS "previousHttpStatus",
                       j.last_network_error AS "previousNetworkError", a.credentials_version AS "credentialsVersion",
                       a.retry_policy AS "retryPolicy", a.max_in_flight AS "maxInFlight", now() AS "claimedAt"`,
      [ids, owner, leaseMs],
    );
    return rows;
  }

  /**
   * Pauses the waiting jobs of accounts that just became needs_reauth or disabled. Its own
   * statement after the completion committed (jobs-then-accounts lock order); the claim
   * already skips these accounts, so nothing is attempted in between.
   */
  async pauseWaitingJobs(accountIds: string[]): Promise<void> {
    if (accountIds.length === 0) return;
    await this.db.query(
      `UPDATE jobs SET status = 'paused', updated_at = now()
       WHERE account_id = ANY($1::uuid[]) AND status = 'scheduled'
         AND EXISTS (SELECT 1 FROM accounts a WHERE a.id = jobs.account_id AND a.status <> 'active')`,
      [accountIds],
    );
  }

  /**
   * Crash recovery: jobs whose lease ran out (their worker died or hung) go back to the queue,
   * due now, with an attempt row saying so; the lost attempt counts against the budget (a job
   * that kills its worker every time must not loop forever). SKIP LOCKED: several processes
   * may sweep at once without waiting on each other.
   */
  async reclaimExpiredLeases(defaultMaxAttempts: number, limit = 500): Promise<number> {
    const rows = await this.db.query(
      `WITH expired AS (
         SELECT j.id, j.lease_owner, j.lease_expires_at, j.attempt_count, j.idempotency_key,
                j.attempt_count - j.attempt_base >= coalesce((a.retry_policy->>'maxAttempts')::int, $1) AS exhausted
         FROM jobs j JOIN accounts a ON a.id = j.account_id
         WHERE j.status = 'in_progress' AND j.lease_expires_at < now()
         ORDER BY j.lease_expires_at
         LIMIT $2
         FOR UPDATE OF j SKIP LOCKED
       ), moved AS (
         UPDATE jobs j SET
           status = CASE WHEN e.exhausted THEN 'dead' ELSE 'scheduled' END,
           dead_reason = CASE WHEN e.exhausted THEN 'max_attempts' END,
           run_at = now(), lease_owner = NULL, lease_expires_at = NULL, error_class = 'transient',
           last_http_status = NULL, last_network_error = 'worker_lost',
           last_error = 'the worker running this attempt stopped before recording its outcome (lease expired)',
           finished_at = CASE WHEN e.exhausted THEN now() END, updated_at = now()
         FROM expired e WHERE j.id = e.id
         RETURNING j.id
       )
       INSERT INTO attempts (job_id, number, started_at, finished_at, network_error, error_class, decision, retry_at,
                             latency_ms, message, idempotency_key, worker)
       SELECT e.id, e.attempt_count, e.lease_expires_at, now(), 'worker_lost', 'transient',
              CASE WHEN e.exhausted THEN 'dead' ELSE 'retry' END, CASE WHEN e.exhausted THEN NULL ELSE now() END,
              0, 'the worker running this attempt stopped before recording its outcome (lease expired)',
              e.idempotency_key, e.lease_owner
       FROM expired e JOIN moved m ON m.id = e.id
       ON CONFLICT (job_id, number) DO NOTHING
       RETURNING job_id`,
      [defaultMaxAttempts, limit],
    );
    return rows.length;
  }

  /**
   * Jobs whose `publishBy` passed while they waited (scheduled, paused or deferred by an open
   * circuit) are dead as `expired`, without an attempt: stale content is not published late.
   */
  async expireDeadlines(limit = 1000): Promise<number> {
    const rows = await this.db.query(`UPDATE jobs SET status = 'dead', dead_reason = 'expired', finished_at = now(), updated_at = now(),
              last_error = 'publishBy (' || to_char(publish_by AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') || ') passed before the job could be published'
       WHERE id IN (
         SELECT id FROM jobs
         WHERE status IN ('scheduled', 'paused') AND publish_by IS NOT NULL AND publish_by < now()
         LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING id`,
      [limit],
    );
    return rows.length;
  }



  /**
   * When the next job becomes due, after now (to sleep exactly that long when idle). Jobs
   * already due but held back (open circuit, full account) are not counted: the poll
   * interval re-checks those, so an idle worker never spins on them.
   */
  async nextRunAt(): Promise<Date | null> {
    const rows = await this.db.query<{ runAt: Date | null }>(
      `SELECT min(run_at) AS "runAt" FROM jobs WHERE status = 'scheduled' AND run_at > now()`,
    );
    return rows[0]?.runAt ?? null;
  }

  /** Unfinished jobs per state, each counted on its own partial index (cheap at any table size). */
  async waitingCounts(): Promise<Record<'due' | 'later' | 'in_progress' | 'paused', number>> {
    const rows = await this.db.query<{ state: 'due' | 'later' | 'in_progress' | 'paused'; n: number }>(
      `SELECT 'due' AS state, count(*)::int AS n FROM jobs WHERE status = 'scheduled' AND run_at <= now()
       UNION ALL SELECT 'later', count(*)::int FROM jobs WHERE status = 'scheduled' AND run_at > now()
       UNION ALL SELECT 'in_progress', count(*)::int FROM jobs WHERE status = 'in_progress'
       UNION ALL SELECT 'paused', count(*)::int FROM jobs WHERE status = 'paused'`,
    );
    const counts = { due: 0, later: 0, in_progress: 0, paused: 0 };
    for (const r of rows) counts[r.state] = r.n;
    return counts;
  }

  /** Seconds since the oldest due job became due (0 when none is). */
  async oldestDueSeconds(): Promise<number> {
    const rows = await this.db.query<{ s: number | null }>(
      `SELECT extract(epoch FROM now() - min(run_at))::float8 AS s FROM jobs WHERE status = 'scheduled' AND run_at <= now()`,
    );
    return Math.max(0, rows[0]?.s ?? 0);
  }

  /** Accounts' public settings and sealed credentials, for the worker's cache. */
  async loadAccounts(ids: string[]): Promise<
    { id: string; workspaceId: string; name: string; config: Record<string, unknown>; credentials: string; credentialsVersion: number }[]
  > {
    return this.db.query(
      `SELECT id, workspace_id AS "workspaceId", name, config, credentials, credentials_version AS "credentialsVersion"
       FROM accounts WHERE id = ANY($1::uuid[])`,
      [ids],
    );
  }

  /** Stores credentials a connector refreshed (a new session or token). */
  async updateCredentials(accountId: string, sealed: string): Promise<void> {
    await this.db.query(
      `UPDATE accounts SET credentials = $2, credentials_version = credentials_version + 1, updated_at = now() WHERE id = $1`,
      [accountId, sealed],
    );
  }
}
