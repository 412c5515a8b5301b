import { Injectable } from '@nestjs/common';
import type { Sql } from '../database/db';
import { JobReportsRepository } from './job-reports.repository';
import type { AccountActivityRow, DeadJobRow } from './job.types';

/**
 * Jobs and attempts over a window of time, as the daily digest and the alerts report them
 * (windows are [from, to)). Each read takes an optional runner so a caller can make it inside
 * its own transaction.
 */
@Injectable()
export class JobReportsService {
  constructor(private readonly reports: JobReportsRepository) {}

  activity(workspaceId: string, from: Date, to: Date, runner?: Sql): Promise<AccountActivityRow[]> {
    return this.reports.activity(workspaceId, from, to, runner);
  }

  dead(workspaceId: string, from: Date, to: Date, limit: number, runner?: Sql): Promise<{ items: DeadJobRow[]; total: number }> {
    return this.reports.dead(workspaceId, from, to, limit, runner);
  }

  topErrors(workspaceId: string, from: Date, to: Date, limit: number, runner?: Sql): Promise<{ message: string; count: number }[]> {
    return this.reports.topErrors(workspaceId, from, to, limit, runner);
  }

  /** The account's jobs waiting for it (paused, or scheduled), for an alert's "N posts wait". */
  waiting(accountId: string, runner?: Sql): Promise<number> {
    return this.reports.waiting(accountId, runner);
  }
}
