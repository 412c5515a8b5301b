import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { Db, Sql } from '../database/db';
import { WakeFold } from './wake-fold';

export const JOBS_CHANNEL = 'herald_jobs';
/** An account stopped taking attempts (disabled, deleted): workers give back its leased jobs. */
export const ACCOUNT_STOPPED_CHANNEL = 'herald_account_stopped';
/** New posts of one process wake other processes at most this often (WakeFold). */
export const NOTIFY_WINDOW_MS = 5;

/**
 * Wakes idle workers (LISTEN herald_jobs) when jobs become due. The payload is the earliest
 * run_at (epoch ms) so a worker can set a timer for jobs due a bit later.
 *
 * - `notify`: sent inside the writing transaction, PostgreSQL delivers it at commit, never for a
 *   rolled-back write (requeues, retries, resumes: rare).
 * - `jobsAdded` (new posts, the hot path): called after the commit. A worker in this process is
 *   woken at once, directly; other processes get one NOTIFY per NOTIFY_WINDOW_MS at most
 *   (WakeFold), sent outside the post's transaction. A NOTIFY inside each post's transaction
 *   serialized the commits of concurrent posts on PostgreSQL's notification queue lock. A
 *   NOTIFY lost (the database went away meanwhile) delays nothing for long: workers claim every
 *   poll interval anyway, and nothing accepted is lost, it is committed.
 */
@Injectable()
export class QueueNotifier implements OnModuleDestroy {
  private readonly logger = new Logger('QueueNotifier');
  private readonly fold = new WakeFold(NOTIFY_WINDOW_MS);
  private readonly local: ((runAt: number) => void)[] = [];
  private flushTimer: NodeJS.Timeout | null = null;
  private lastFailure = 0;

  constructor(private readonly db: Db) {}

  /** Sent in the transaction that disables or deletes an account; delivered at commit. */
  async accountStopped(accountId: string, q: Sql = this.db): Promise<void> {
    await q.query(`SELECT pg_notify($1, $2)`, [ACCOUNT_STOPPED_CHANNEL, accountId]);
  }

  async notify(q: Sql = this.db, runAt: Date = new Date(0)): Promise<void> {
    await q.query(`SELECT pg_notify($1, $2)`, [JOBS_CHANNEL, String(runAt.getTime())]);
  }

  /** The worker of this process, woken directly by `jobsAdded`. */
  onJobsAdded(handler: (runAt: number) => void): void {
    this.local.push(handler);
  }

  /** Jobs due at `runAt` were committed: wake this process's worker now, the others soon (folded). */
  jobsAdded(runAt: Date): void {
    const at = runAt.getTime();
    for (const wake of this.local) wake(at);
    const now = Date.now();
    const send = this.fold.add(at, now);
    if (send !== null) this.send(send);
    else if (!this.flushTimer && this.fold.flushAt !== null) {
      this.flushTimer = setTimeout(
        () => {
          this.flushTimer = null;
          const folded = this.fold.flush(Date.now());
          if (folded !== null) this.send(folded);
        },
        Math.max(0, this.fold.flushAt - now),
      );
    }
  }

  onModuleDestroy(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const folded = this.fold.flush(Date.now());
    if (folded !== null) this.send(folded);
  }

  private send(runAt: number): void {
    this.db.query(`SELECT pg_notify($1, $2)`, [JOBS_CHANNEL, String(runAt)]).catch((err: unknown) => {
      if (Date.now() - this.lastFailure < 60_000) return;
      this.lastFailure = Date.now();
      this.logger.warn(`waking other processes failed (${(err as Error).message}); they find the new jobs at their next poll`);
    });
  }
}
