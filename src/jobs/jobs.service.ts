import { Injectable } from '@nestjs/common';
import { notFound } from '../common/errors';
import type { JobStatus } from '../queue/job-lifecycle';
import type { Sql } from '../database/db';
import { JobReads } from '../queue/job-reads.service';
import { AttemptRow, AttemptView, JobRow, JobView, toAttemptView, toJobView } from './job.types';

export type JobWithAttempts = JobView & { attempts: AttemptView[] };

/** An account's delivery state as its jobs and attempts tell it (the settings page's account cards). */
export interface AccountActivity {
  lastFailure: { at: string; errorClass: string; message: string | null } | null;
  lastAuthFailureAt: string | null;
  scheduled: number;
  paused: number;
  inProgress: number;
  dead: number;
}

/** Why POST /v1/jobs/:id/retry refuses a job in each state it cannot retry. */
export const WHY_NOT_RETRYABLE: Record<Exclude<JobStatus, 'scheduled' | 'dead'>, string> = {
  in_progress: 'an attempt of this job is in flight; wait for its outcome',
  succeeded: 'this job was already published; retrying would publish it twice',
  paused:
    'this job is paused because its account needs re-authentication or is disabled: fix the account (PATCH /v1/accounts/:id) and it resumes',
  cancelled: 'this job was cancelled',
  discarded: 'this job was discarded from the dead-letter queue',
};

/** Jobs and attempts as the API and the page show them, read through the queue (JobReads: every statement on its tables is its own). */
@Injectable()
export class JobsService {
  constructor(private readonly jobs: JobReads) {}

  async get(workspaceId: string, id: string): Promise<JobWithAttempts> {
    const job = await this.jobs.job(workspaceId, id);
    if (!job) throw notFound('job', id);
    const attempts = await this.jobs.attempts(id);
    return { ...toJobView(job), attempts: attempts.map(toAttemptView) };
  }

  /** The jobs of these posts, in creation order (in `m`'s transaction when given). */
  forPosts(workspaceId: string, postIds: string[], m?: Sql): Promise<JobRow[]> {
    return this.jobs.jobsOfPosts(workspaceId, postIds, m);
  }

  /** A job's attempts, oldest first (the caller has checked the job is the workspace's). */
  attempts(jobId: string): Promise<AttemptRow[]> {
    return this.jobs.attempts(jobId);
  }

  /** Posts with a job that may still send media `mediaId` (DELETE /v1/media/:id refuses while there is one). */
  postsNeedingMedia(workspaceId: string, mediaId: string, limit: number): Promise<{ postId: string }[]> {
    return this.jobs.postsNeedingMedia(workspaceId, mediaId, limit);
  }

  /** What the settings page shows on each account card, read from the accounts' jobs and attempts. */
  async accountActivity(workspaceId: string, accountIds: string[]): Promise<Map<string, AccountActivity>> {
    const [failures, counts] = await Promise.all([
      this.jobs.latestFailures(workspaceId, accountIds),
      this.jobs.jobCountsByAccount(workspaceId, accountIds),
    ]);
    const out = new Map<string, AccountActivity>(
      accountIds.map((id) => [id, { lastFailure: null, lastAuthFailureAt: null, scheduled: 0, paused: 0, inProgress: 0, dead: 0 }]),
    );
    for (const f of failures) {
      const a = out.get(f.accountId);
      if (!a) continue;
      a.lastFailure = { at: f.at.toISOString(), errorClass: f.errorClass, message: f.message };
      a.lastAuthFailureAt = f.lastAuthAt?.toISOString() ?? null;
    }
    for (const c of counts) {
      const a = out.get(c.accountId);
      if (a) Object.assign(a, { scheduled: c.scheduled, paused: c.paused, inProgress: c.inProgress, dead: c.dead });
    }
    return out;
  }
}
