import { Injectable } from '@nestjs/common';
import { Db } from '../database/db';
import type { AccountFeedback, LockedAccount } from '../account-state/account-state';
import type {
  AccountSlot,
  Candidate,
  ClaimedJob,
  ClaimPlan,
  DueMoments,
  FinishedAttempt,
  LeasedJobRef,
  RoundAccounts,
  RoundResult,
  SlowStart,
} from './queue.types';
import { claimCandidates } from './sql/claim-candidates';
import { claimJobs } from './sql/claim-jobs';
import { expireDeadlines } from './sql/expire-deadlines';
import { expireLeasedJobs } from './sql/expire-leased-jobs';
import { extendLeases } from './sql/extend-leases';
import { pauseAccountJobs, pauseStragglers } from './sql/pause-jobs';
import { reclaimExpiredLeases } from './sql/reclaim-expired-leases';
import { recordAttempts } from './sql/record-attempts';
import { recordLateSuccesses } from './sql/record-late-successes';
import { releaseJobs } from './sql/release-jobs';
import { resumeJobs } from './sql/resume-jobs';
import { inFlightCounts } from './sql/in-flight-counts';
import { nextScheduledRunAt } from './sql/next-run-at';
import { dueMoments } from './sql/due-moments';
import { oldestDueSeconds, waitingCounts } from './sql/queue-depth';
import { accountSource, enqueueEvents, jobOutcomeSource } from './sql/enqueue-events';
import type { SqlPiece } from '../database/statement';

/** What a worker hands to one round. */
export interface RoundInput {
  owner: string;
  finished: FinishedAttempt[];
  /** Leased jobs this worker will not attempt: back to the queue, no attempt spent. */
  release: LeasedJobRef[];
  /** Leased jobs whose publishBy passed before they could start: dead as expired, no attempt. */
  expired: LeasedJobRef[];
  claimLimit: number;
  /** Jobs leased per in-flight slot of an account (see claim-candidates.ts). */
  prefetch: number;
  /** The slow start after a circuit closes (WORKER_SLOW_START_MS and _RATE; worker/slow-start.ts): the candidate scan applies it as the plan does. */
  slowStart: SlowStart;
  leaseMs: number;
  feedback: (accounts: LockedAccount[], recorded: FinishedAttempt[]) => Map<string, AccountFeedback>;
  plan: (candidates: Candidate[], accounts: Map<string, AccountSlot>, now: Date) => ClaimPlan;
  /** The account side of the round (account-state's statements, in this transaction). */
  accounts: RoundAccounts;
  /** Also read when the next scheduled job is due after this round's claim (RoundResult.nextRunAt). */
  nextRunAt?: boolean;
}

/**
 * The worker's side of the queue: its rounds, lease renewal, crash recovery and deadline sweep,
 * each statement in its own file under ./sql with the reason for its shape. Other modules change
 * jobs through JobLifecycle, never here.
 *
 * Lock order, everywhere in Herald: job rows first, then account rows (in id order). The round,
 * the account API and the dead-letter queue all follow it, so they cannot deadlock. No
 * transaction is ever open across an HTTP call: a claim commits before delivery starts, and
 * outcomes are recorded by a later, short transaction.
 */
@Injectable()
export class JobStore {
  constructor(private readonly db: Db) {}

  /**
   * One round of the worker, in ONE transaction: record the attempts that finished, give back or
   * expire leased jobs it will not run, then claim up to `claimLimit` due jobs. Doing both
   * frees the in-flight slots of the finished attempts for this very claim, and costs one commit
   * per round instead of two.
   *
   * 1. release, expireLeased, record and the candidate scan go out together (pipeline): none
   *    needs another's answer. The candidate scan runs after record and release in the same
   *    transaction, so it sees the slots and jobs they freed.
   * 2. Outcomes whose lease was lost: successes are kept (recordLate); failures only logged by
   *    the worker (the reclaim already recorded the lost attempt). An extra statement, only then.
   * 3. Every account involved, locked FOR UPDATE in id order (account-state.repository.ts, through `input.accounts`).
   * 4. `feedback` (pure: account-feedback.ts) folds the recorded outcomes into each account's
   *    circuit and status; refreshed credentials are stored if nobody replaced them meanwhile;
   *    a job paused by the refusal of credentials a person has replaced goes back to the queue.
   * 5. In-flight counts; `plan` (pure: claim-plan.ts) picks the jobs; they become in_progress
   *    with a lease; a probe moves its circuit to half_open until the lease ends. COMMIT travels
   *    with these last statements. Round trips: 4 (3 without a claim), +1 with late outcomes.
   */
  async round(input: RoundInput): Promise<RoundResult> {
    const { owner, finished, claimLimit, leaseMs, prefetch } = input;
    return this.db.transaction(async (tx) => {
      const [, , recorded, candidates, nextRunAt] = await Promise.all([
        releaseJobs(tx, owner, input.release),
        expireLeasedJobs(tx, owner, input.expired),
        recordAttempts(tx, owner, finished),
        claimLimit > 0 ? claimCandidates(tx, claimLimit, owner, prefetch, input.slowStart) : Promise.resolve([]),
        // In the same transaction as the claim, after the retries just recorded: its now() is the
        // claim's, so a job is either due for this claim or counted here, never neither (a
        // separate query a moment later missed a retry that became due in between, and an idle
        // worker slept a whole poll interval: the fault suite's pooler case, 60 s).
        input.nextRunAt ? nextScheduledRunAt(tx) : Promise.resolve(undefined),
      ]);
      const lateSuccesses = finished.filter((a) => !recorded.has(a.jobId) && a.errorClass === 'success');
      const recordedLate = lateSuccesses.length > 0 ? await recordLateSuccesses(tx, owner, lateSuccesses) : new Set<string>();

      const kept = finished.filter((a) => recorded.has(a.jobId));
      const refreshed = latestCredentialsPerAccount(finished);
      const accountIds = [
        ...new Set([...kept.map((a) => a.accountId), ...candidates.map((c) => c.accountId), ...refreshed.map((r) => r.accountId)]),
      ].sort();
      const locked = await input.accounts.lock(tx, accountIds);
      const byId = new Map(locked.map((a) => [a.id, a]));

      const involved = new Set(kept.map((a) => a.accountId));
      const decided =
        kept.length > 0
          ? input.feedback(
              locked.filter((a) => involved.has(a.id)),
              kept,
            )
          : new Map<string, AccountFeedback>();
      for (const a of locked) {
        const d = decided.get(a.id);
        if (d) a.circuit = d.circuit; // the plan must see the circuits as this round leaves them
      }
      // Paused by a refusal of credentials a person replaced meanwhile (a save that landed after
      // record's own check): retried now with the new ones. A no-op for jobs record already moved.
      const staleAuth = kept.filter((a) => a.decision === 'pause' && byId.get(a.accountId)?.credentialsVersion !== a.credentialsVersion);
      const statusChanged = [...decided].filter(([, d]) => d.status !== null).map(([id]) => id);
      // The events of what this round decided, written in its transaction (docs/events.md): a
      // post published, a job dead, an account that needs a person. After applyFeedback in the
      // pipeline below, so the accounts are read as it leaves them.
      const events = roundEvents(
        [...kept.filter((a) => a.decision === 'succeed').map((a) => a.jobId), ...recordedLate],
        [...kept.filter((a) => a.decision === 'dead').map((a) => a.jobId), ...input.expired.map((r) => r.id)],
        [...decided].filter(([, d]) => d.status?.value === 'needs_reauth').map(([id]) => id),
      );
      const usable = locked.filter((a) => a.status === 'active' && !a.deleted && !statusChanged.includes(a.id));
      const [counts, , , , eventsWritten] = await Promise.all([
        candidates.length > 0 && usable.length > 0
          ? inFlightCounts(
              tx,
              owner,
              usable.map((a) => a.id),
            )
          : Promise.resolve(new Map<string, { total: number; others: number }>()),
        input.accounts.applyFeedback(tx, decided),
        input.accounts.storeRefreshedCredentials(tx, refreshed),
        resumeJobs(
          tx,
          staleAuth.map((a) => a.jobId),
        ),
        enqueueEvents(tx, events),
      ]);

      let claimed: ClaimedJob[] = [];
      let wakeAt: Date | null = null;
      if (candidates.length > 0 && usable.length > 0) {
        const slots = new Map<string, AccountSlot>(
          usable.map((a) => {
            const c = counts.get(a.id) ?? { total: 0, others: 0 };
            const d = decided.get(a.id);
            return [
              a.id,
              {
                id: a.id,
                maxInFlight: a.maxInFlight,
                // Leases of another process on this account: it is theirs until they are done.
                prefetch: c.others > 0 ? 0 : prefetch,
                inFlight: c.total,
                circuit: a.circuit,
                // Closed by this round's feedback: at this transaction's now(), which the UPDATE writes too.
                closedAt: d?.closed ? candidates[0].now : a.circuitClosedAt,
                // Closed by this round: the UPDATE starts the count again.
                slowStartLeased: d?.closed ? 0 : a.slowStartLeased,
              },
            ];
          }),
        );
        const plan = input.plan(candidates, slots, candidates[0].now);
        wakeAt = plan.wakeAt;
        const [, , jobs] = await Promise.all([
          input.accounts.startProbes(tx, plan.probes, leaseMs),
          input.accounts.countSlowStartLeases(tx, plan.slowStartLeased),
          plan.take.length > 0 ? claimJobs(tx, owner, plan.take, leaseMs) : Promise.resolve([]),
          tx.commit(),
        ]);
        claimed = jobs;
      }
      const inactive = locked.filter((a) => involved.has(a.id) && a.status !== 'active').map((a) => a.id);
      return {
        recorded,
        recordedLate,
        claimed,
        notActive: [...new Set([...statusChanged, ...inactive])],
        nextRunAt,
        wakeAt,
        eventsWritten,
      };
    });
  }

  /** Renews the leases of the jobs this worker holds; returns those still its own (extend-leases.ts). */
  extendLeases(owner: string, ids: string[], leaseMs: number): Promise<Set<string>> {
    return extendLeases(this.db, owner, ids, leaseMs);
  }

  /**
   * After a round found accounts not active: their waiting jobs are paused. Its own statement
   * after the round committed (jobs-then-accounts lock order); the claim already skips these
   * accounts, so nothing is attempted in between.
   */
  async pauseWaitingJobs(accountIds: string[]): Promise<void> {
    await pauseAccountJobs(this.db, accountIds, true);
  }

  /** The crash recovery; a job it makes dead (its budget spent) is reported (post.failed) in the same transaction. */
  reclaimExpiredLeases(defaultMaxAttempts: number, owner: string, held: string[]): Promise<{ reclaimed: number; eventsWritten: number }> {
    return this.db.transaction(async (tx) => {
      const ids = await reclaimExpiredLeases(tx, { defaultMaxAttempts, owner, held });
      const eventsWritten = ids.length > 0 ? await enqueueEvents(tx, [jobOutcomeSource('post.failed', ids)]) : 0;
      return { reclaimed: ids.length, eventsWritten };
    });
  }

  /** Waiting jobs of accounts that are not active, missed by the round's pause (pause-jobs.ts). */
  pauseStragglers(): Promise<number> {
    return pauseStragglers(this.db);
  }

  /** The deadline sweep; each job it makes dead is reported (post.failed) in the same transaction. */
  expireDeadlines(): Promise<{ expired: number; eventsWritten: number }> {
    return this.db.transaction(async (tx) => {
      const ids = await expireDeadlines(tx);
      const eventsWritten = ids.length > 0 ? await enqueueEvents(tx, [jobOutcomeSource('post.failed', ids)]) : 0;
      return { expired: ids.length, eventsWritten };
    });
  }

  /** When the next job becomes due, after now, to sleep exactly that long when idle (next-run-at.ts). */
  nextRunAt(): Promise<Date | null> {
    return nextScheduledRunAt(this.db);
  }

  /** What an idle worker's next maintenance waits for: due jobs left unclaimed, the earliest lease and publishBy (due-moments.ts). */
  dueMoments(): Promise<DueMoments> {
    return dueMoments(this.db);
  }

  /** Unfinished jobs per state, each counted on its own partial index (queue-depth.ts). */
  waitingCounts(): Promise<Record<'due' | 'later' | 'in_progress' | 'paused', number>> {
    return waitingCounts(this.db);
  }

  /** Seconds since the oldest due job became due (0 when none is). */
  oldestDueSeconds(): Promise<number> {
    return oldestDueSeconds(this.db);
  }
}

/** The event sources of a round's outcomes (sql/enqueue-events.ts); none when nothing happened that an event reports. */
function roundEvents(published: string[], failed: string[], needsReauth: string[]): SqlPiece[] {
  return [
    ...(published.length > 0 ? [jobOutcomeSource('post.published', published)] : []),
    ...(failed.length > 0 ? [jobOutcomeSource('post.failed', failed)] : []),
    ...(needsReauth.length > 0 ? [accountSource('account.needs_reauth', needsReauth)] : []),
  ];
}

/**
 * Refreshed credentials to store, one per account: of several attempts of one account that
 * refreshed in the same batch, the last to finish holds the newest session or token.
 */
function latestCredentialsPerAccount(finished: FinishedAttempt[]): { accountId: string; sealed: string; basedOnVersion: number }[] {
  const latest = new Map<string, FinishedAttempt>();
  for (const a of finished) {
    if (a.refreshedCredentials === null) continue;
    const seen = latest.get(a.accountId);
    if (!seen || seen.finishedAt.getTime() <= a.finishedAt.getTime()) latest.set(a.accountId, a);
  }
  return [...latest.values()].map((a) => ({
    accountId: a.accountId,
    sealed: a.refreshedCredentials!,
    basedOnVersion: a.credentialsVersion,
  }));
}
