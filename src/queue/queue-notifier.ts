import { Injectable } from '@nestjs/common';
import { Db, Sql } from '../database/db';

export const JOBS_CHANNEL = 'herald_jobs';
/** An account stopped taking attempts (disabled, deleted): workers give back its leased jobs. */
export const ACCOUNT_STOPPED_CHANNEL = 'herald_account_stopped';

/**
 * Wakes idle workers (LISTEN herald_jobs) when jobs become due. Sent inside the writing
 * transaction, PostgreSQL delivers it at commit, never for a rolled-back write. The payload
 * is the earliest run_at (epoch ms) so a worker can set a timer for jobs due a bit later.
 */
@Injectable()
export class QueueNotifier {
  constructor(private readonly db: Db) {}

  /** Sent in the transaction that disables or deletes an account; delivered at commit. */
  async accountStopped(accountId: string, q: Sql = this.db): Promise<void> {
    await q.query(`SELECT pg_notify($1, $2)`, [ACCOUNT_STOPPED_CHANNEL, accountId]);
  }

  async notify(q: Sql = this.db, runAt: Date = new Date(0)): Promise<void> {
    await q.query(`SELECT pg_notify($1, $2)`, [JOBS_CHANNEL, String(runAt.getTime())]);
  }
}
