import type { Sql } from '../../database/db';
import type { DueMoments } from '../queue.types';

/**
 * The moments after which the queue's maintenance has something to do, read after each
 * maintenance so an idle worker arms a timer for them instead of polling (worker.service.ts,
 * maintenance-plan.ts). Each part is one descent of a partial index that holds only unfinished
 * jobs (jobs_ready, jobs_in_progress, jobs_publish_by): the cost does not grow with history.
 * `run_at > now()` jobs are not here: the round that ends idle reads the next one (next-run-at.ts)
 * in its own transaction.
 */
export async function dueMoments(q: Sql): Promise<DueMoments> {
  const rows = await q.prepared<DueMoments>(
    'herald_due_moments',
    `SELECT now() AS now,
            EXISTS (SELECT 1 FROM job_state WHERE status = 'scheduled' AND run_at <= now()) AS "dueWaiting",
            (SELECT min(lease_expires_at) FROM job_state WHERE status = 'in_progress') AS "leaseExpiresAt",
            (SELECT min(publish_by) FROM job_state
              WHERE status IN ('scheduled', 'paused') AND publish_by IS NOT NULL) AS "publishBy"`,
  );
  return rows[0];
}
