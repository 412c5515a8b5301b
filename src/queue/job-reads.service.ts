import { Injectable } from '@nestjs/common';
import type { Keyset } from '../common/pagination';
import { Db, Sql } from '../database/db';
import type { SqlPiece } from '../database/statement';
import type { JobStatus } from './job-lifecycle';
import type {
  AccountActivityRow,
  AccountFailureRow,
  AccountJobCountsRow,
  AttemptRow,
  DeadJobRow,
  DlqFilter,
  DlqRow,
  EventDeliveryRow,
  JobRow,
} from './job-reads.types';
import { eventDeliveriesOf } from './sql/read-event-deliveries';
import { jobCountsByAccount, latestFailures, waitingJobsOfAccount } from './sql/account-activity';
import { postsNeedingMedia } from './sql/posts-needing-media';
import { deadByProviderAndReason, deadIdsMatching, findDeadJob, listDeadJobs } from './sql/read-dead-jobs';
import { attemptsOfJob, findJob, jobsOfPosts } from './sql/read-jobs';
import { postStatusOf } from './sql/read-post-status';
import { windowActivity, windowDead, windowTopErrors } from './sql/report-window';

/**
 * Every read of jobs and attempts that other modules need, in one place: the job API and the
 * dead-letter queue's views, a post's jobs and its status, the settings page's account cards,
 * the digest's and alerts' reports, media still in use. Each statement is a file of ./sql beside
 * the statements that write the same tables, with the index it reads through; other modules
 * receive rows (job-reads.types.ts), never SQL on these tables (the lint refuses it:
 * architecture.json "tables"). Reads take an optional runner, to read inside the caller's transaction.
 */
@Injectable()
export class JobReads {
  constructor(private readonly db: Db) {}

  /** A job of the workspace, or null. */
  job(workspaceId: string, id: string, m: Sql = this.db): Promise<JobRow | null> {
    return findJob(m, workspaceId, id);
  }

  /** The jobs of these posts, in creation order. */
  jobsOfPosts(workspaceId: string, postIds: string[], m: Sql = this.db): Promise<JobRow[]> {
    return jobsOfPosts(m, workspaceId, postIds);
  }

  /** An event endpoint's latest deliveries, newest first (docs/events.md). */
  eventDeliveries(workspaceId: string, accountId: string, limit: number): Promise<EventDeliveryRow[]> {
    return eventDeliveriesOf(this.db, workspaceId, accountId, limit);
  }

  /** One delivery of an event endpoint, or null (another endpoint's, a post's job, unknown). */
  async eventDelivery(workspaceId: string, accountId: string, jobId: string): Promise<EventDeliveryRow | null> {
    return (await eventDeliveriesOf(this.db, workspaceId, accountId, 1, jobId))[0] ?? null;
  }

  /** A job's attempts, oldest first (the caller has checked the job is the workspace's). */
  attempts(jobId: string, m: Sql = this.db): Promise<AttemptRow[]> {
    return attemptsOfJob(m, jobId);
  }

  /**
   * A post's status from its jobs (post-status.ts), as a piece of the posts module's list
   * statement (its filter), given the post's id column there.
   */
  postStatusOf(postId: SqlPiece): SqlPiece {
    return postStatusOf(postId);
  }

  /** Posts with a job (or drafts) that may still send media `mediaId`. */
  postsNeedingMedia(workspaceId: string, mediaId: string, limit: number): Promise<{ postId: string }[]> {
    return postsNeedingMedia(this.db, workspaceId, mediaId, limit);
  }

  /** Per account, its latest failed attempt and its latest refusal of credentials. */
  latestFailures(workspaceId: string, accountIds: string[]): Promise<AccountFailureRow[]> {
    return latestFailures(this.db, workspaceId, accountIds);
  }

  /** Per account, its jobs waiting, running and dead. */
  jobCountsByAccount(workspaceId: string, accountIds: string[]): Promise<AccountJobCountsRow[]> {
    return jobCountsByAccount(this.db, workspaceId, accountIds);
  }

  /** The account's jobs waiting for it (paused, or scheduled). */
  waitingJobsOfAccount(accountId: string, m: Sql = this.db): Promise<number> {
    return waitingJobsOfAccount(m, accountId);
  }

  /** The digest's window [from, to): per account, published, failed attempts, newly dead. */
  windowActivity(workspaceId: string, from: Date, to: Date, m: Sql = this.db): Promise<AccountActivityRow[]> {
    return windowActivity(m, workspaceId, from, to);
  }

  /** The digest's window: jobs that died in it and are still dead, at most `limit`, and how many in all. */
  windowDead(workspaceId: string, from: Date, to: Date, limit: number, m: Sql = this.db): Promise<{ items: DeadJobRow[]; total: number }> {
    return windowDead(m, workspaceId, from, to, limit);
  }

  /** The digest's window: its most frequent error messages. */
  windowTopErrors(
    workspaceId: string,
    from: Date,
    to: Date,
    limit: number,
    m: Sql = this.db,
  ): Promise<{ message: string; count: number }[]> {
    return windowTopErrors(m, workspaceId, from, to, limit);
  }

  /** The dead-letter list: newest death first, a page of `limit` (one more read, to tell a next page). */
  deadJobs(workspaceId: string, statuses: JobStatus[], filter: DlqFilter, after: Keyset | null, limit: number): Promise<DlqRow[]> {
    return listDeadJobs(this.db, workspaceId, statuses, filter, after, limit);
  }

  /** Any job of the workspace with its account, as the dead-letter queue shows it. */
  deadJob(workspaceId: string, id: string, m: Sql = this.db): Promise<DlqRow | null> {
    return findDeadJob(m, workspaceId, id);
  }

  /** Up to `limit` dead jobs matching the filter, in id order (a bulk requeue locks them next). */
  deadIdsMatching(workspaceId: string, filter: DlqFilter, limit: number): Promise<string[]> {
    return deadIdsMatching(this.db, workspaceId, filter, limit);
  }

  /** Dead jobs per provider and dead reason (the DLQ size gauge). */
  deadByProviderAndReason(): Promise<{ provider: string; reason: string; n: number }[]> {
    return deadByProviderAndReason(this.db);
  }
}
