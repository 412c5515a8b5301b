import { Injectable } from '@nestjs/common';
import type { JobPayload } from '../connectors/connector.interface';
import { Db, Sql, Tx } from '../database/db';
import { assertTransition } from './job-lifecycle';
import { QueueNotifier } from './queue-notifier';
import type { NewJob } from './queue.types';
import { cancelAccountJobs, cancelPostJobs } from './sql/cancel-jobs';
import { discardDeadJob } from './sql/discard-dead-job';
import { editDeadPayload } from './sql/edit-dead-payload';
import { EnqueuedJobs, EnqueueInput, enqueueJobsCte, isRefusedStart } from './sql/enqueue-jobs';
import {
  accountSource,
  EnqueuedEvents,
  enqueueEvents,
  eventDeliveries,
  jobOutcomeSource,
  NewEvent,
  valuesSource,
} from './sql/enqueue-events';
import { LockedJob, lockJobs, lockPostJobs } from './sql/lock-jobs';
import { pauseAccountJobs } from './sql/pause-jobs';
import { reschedulePostJobs } from './sql/reschedule-jobs';
import { resumeAccountJobs } from './sql/resume-jobs';
import { retryNow } from './sql/retry-now';
import { withdrawPostJobs } from './sql/withdraw-jobs';
import { RevivedJob, ReviveTarget, reviveDeadJobs } from './sql/revive-dead-jobs';

export type { RevivedJob, ReviveTarget } from './sql/revive-dead-jobs';
export type { LockedJob } from './sql/lock-jobs';
export type { EnqueuedJobs } from './sql/enqueue-jobs';
export type { EnqueuedEvents, NewEvent } from './sql/enqueue-events';

/**
 * The job lifecycle as other modules change it: accounts (pause, resume, cancel), posts (cancel,
 * reschedule), manual retry, and the dead-letter queue (revive, edit, discard). The queue module
 * is the only writer of `jobs` (the transition table is job-lifecycle.ts); each method is one
 * operation of that table, run in the caller's transaction (`q`), so a change of an account or
 * a post and the change of its jobs commit together. Callers lock job rows before account rows.
 *
 * Operations that make jobs due send the wake-up in the same transaction: PostgreSQL delivers it
 * at commit, never for a rolled-back change.
 */
@Injectable()
export class JobLifecycle {
  constructor(
    private readonly db: Db,
    private readonly notifier: QueueNotifier,
  ) {}

  /**
   * enqueue: the jobs of a new post, as CTEs the post's own INSERT statement embeds (one round
   * trip per accepted post: sql/enqueue-jobs.ts), a typed piece whose parameters the statement's
   * composition numbers (database/statement.ts). Each job's status comes from `enqueueStatus`.
   * Workers are woken after the commit (`jobsAdded`).
   */
  enqueue(input: EnqueueInput, payloadFor: (job: NewJob) => JobPayload): EnqueuedJobs {
    for (const j of input.jobs) assertTransition('enqueue', null, j.status);
    return enqueueJobsCte(input, payloadFor);
  }

  /** The post's statement failed because a job could not start: one of its `guards` said no (or a bug); nothing was written. */
  isRefusedStart(err: unknown): boolean {
    return isRefusedStart(err);
  }

  /**
   * enqueue of event deliveries (sql/enqueue-events.ts): the events the caller built, as CTEs
   * its own statement embeds (a post's intake: one statement, one commit). The caller wakes the
   * workers after the commit when any was written (`jobsAdded(new Date())`).
   */
  eventsCte(events: NewEvent[]): EnqueuedEvents {
    return eventDeliveries([valuesSource(events)]);
  }

  /**
   * enqueue of event deliveries in the caller's transaction: the events it built, and the
   * account events of `accounts` (read as the transaction leaves them). The wake-up goes with
   * the transaction (delivered at commit, never for a rollback). Returns the deliveries written.
   */
  async enqueueEvents(
    q: Sql,
    input: { events?: NewEvent[]; accounts?: { type: 'account.needs_reauth' | 'account.recovered'; ids: string[] } },
  ): Promise<number> {
    const sources = [
      ...(input.events && input.events.length > 0 ? [valuesSource(input.events)] : []),
      ...(input.accounts && input.accounts.ids.length > 0 ? [accountSource(input.accounts.type, input.accounts.ids)] : []),
    ];
    const n = await enqueueEvents(q, sources);
    if (n > 0) await this.notifier.notify(q);
    return n;
  }

  /** post.published / post.failed of jobs the caller's transaction ended (not needed from the worker: its rounds report their own). */
  async enqueueJobOutcomeEvents(q: Sql, outcome: 'post.published' | 'post.failed', jobIds: string[]): Promise<number> {
    if (jobIds.length === 0) return 0;
    const n = await enqueueEvents(q, [jobOutcomeSource(outcome, jobIds)]);
    if (n > 0) await this.notifier.notify(q);
    return n;
  }

  /**
   * A transaction for a change of jobs and what commits with it (the accounts' share locks, the
   * audit trail): the dead-letter queue's edit, requeue, retry and discard, which have no table
   * of their own. Lock the jobs first (lockJobs), then accounts.
   */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /** A new post's jobs committed: wake this process's worker now, the others soon (QueueNotifier). */
  jobsAdded(runAt: Date): void {
    this.notifier.jobsAdded(runAt);
  }

  /** Locks the workspace's jobs among `ids` in id order (jobs before accounts); `onlyDead`: dead ones only. */
  lockJobs(q: Sql, workspaceId: string, ids: string[], onlyDead = false): Promise<LockedJob[]> {
    return lockJobs(q, workspaceId, ids, onlyDead);
  }

  /** Locks every job of a post (its edit or cancel decides under these locks whether any started). */
  lockPostJobs(q: Sql, workspaceId: string, postId: string): Promise<LockedJob[]> {
    return lockPostJobs(q, workspaceId, postId);
  }

  /** pause: the waiting jobs of an account that became needs_reauth or disabled. */
  pauseAccount(q: Sql, accountId: string): Promise<number> {
    return pauseAccountJobs(q, [accountId], false);
  }

  /** resume: the paused jobs of an account that is active again; idle workers are woken. */
  async resumeAccount(q: Sql, accountId: string): Promise<number> {
    const n = await resumeAccountJobs(q, accountId);
    if (n > 0) await this.notifier.notify(q);
    return n;
  }

  /** cancel: the unstarted jobs of a deleted account. */
  cancelAccount(q: Sql, workspaceId: string, accountId: string): Promise<number> {
    return cancelAccountJobs(q, workspaceId, accountId);
  }

  /** cancel: the unstarted jobs of a deleted post. */
  cancelPost(q: Sql, workspaceId: string, postId: string): Promise<number> {
    return cancelPostJobs(q, workspaceId, postId);
  }

  /**
   * withdraw: the unstarted jobs of a post that must be approved again, deleted (a post waiting for
   * approval has none); the caller holds their locks. Returns how many were deleted.
   */
  withdrawPost(q: Sql, workspaceId: string, postId: string): Promise<number> {
    return withdrawPostJobs(q, workspaceId, postId);
  }

  /** reschedule: a post edited before any job started (the caller holds the jobs' locks). */
  async reschedulePost(
    q: Sql,
    postId: string,
    runAt: Date,
    publishBy: Date | null,
    payloadFor: (textOverride: string | null, previous: JobPayload) => JobPayload,
  ): Promise<void> {
    await reschedulePostJobs(q, postId, runAt, publishBy, payloadFor);
    await this.notifier.notify(q, runAt);
  }

  /** retry of a job waiting for its next attempt: due now. False when it is not waiting. */
  async retryNow(q: Sql, workspaceId: string, jobId: string): Promise<boolean> {
    const done = await retryNow(q, workspaceId, jobId);
    if (done) await this.notifier.notify(q);
    return done;
  }

  /**
   * retry | requeue of dead jobs: the one revive rule (revive-dead-jobs.ts) for the manual retry
   * and the dead-letter queue alike. The caller decides each job's target under its account lock;
   * a target the lifecycle table does not list for a dead job throws before anything is written
   * (and the statement's guard would refuse it too).
   */
  async revive(q: Sql, jobs: { id: string; status: ReviveTarget }[], runAt: Date | null): Promise<RevivedJob[]> {
    for (const j of jobs) assertTransition('requeue', 'dead', j.status);
    const done = await reviveDeadJobs(q, jobs, runAt);
    if (done.some((j) => j.status === 'scheduled')) await this.notifier.notify(q, runAt ?? undefined);
    return done;
  }

  /** edit: a dead job's payload corrected. False when it is no longer dead. */
  editDeadPayload(q: Sql, jobId: string, payload: JobPayload): Promise<boolean> {
    return editDeadPayload(q, jobId, payload);
  }

  /** discard: a dead job dropped from the dead-letter queue. False when it is no longer dead. */
  discard(q: Sql, jobId: string): Promise<boolean> {
    return discardDeadJob(q, jobId);
  }

  /** Workers holding this account's leased jobs give back those not started (sent at commit of `q`). */
  accountStopped(accountId: string, q: Sql = this.db): Promise<void> {
    return this.notifier.accountStopped(accountId, q);
  }
}
