import { Injectable } from '@nestjs/common';
import type { Sql } from '../database/db';
import { JobReads } from '../queue/job-reads.service';
import type { AccountActivityRow, DeadJobRow } from './job.types';

/**
 * Jobs and attempts over a window of time, as the daily digest and the alerts report them
 * (windows are [from, to)), read through the queue (JobReads; the statements are
 * queue/sql/report-window.ts and account-activity.ts). Each read takes an optional runner so a
 * caller can make it inside its own transaction.
 */
@Injectable()
export class JobReportsService {
  constructor(private readonly reads: JobReads) {}

  activity(workspaceId: string, from: Date, to: Date, runner?: Sql): Promise<AccountActivityRow[]> {
    return this.reads.windowActivity(workspaceId, from, to, runner);
  }

  dead(workspaceId: string, from: Date, to: Date, limit: number, runner?: Sql): Promise<{ items: DeadJobRow[]; total: number }> {
    return this.reads.windowDead(workspaceId, from, to, limit, runner);
  }

  topErrors(workspaceId: string, from: Date, to: Date, limit: number, runner?: Sql): Promise<{ message: string; count: number }[]> {
    return this.reads.windowTopErrors(workspaceId, from, to, limit, runner);
  }

  /** The account's jobs waiting for it (paused, or scheduled), for an alert's "N posts wait". */
  waiting(accountId: string, runner?: Sql): Promise<number> {
    return this.reads.waitingJobsOfAccount(accountId, runner);
  }
}
