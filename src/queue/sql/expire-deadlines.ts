import type { Sql } from '../../database/db';
import { guard } from '../job-lifecycle';

/**
 * expire (scheduled | paused → dead, expired): jobs whose publishBy passed while they waited
 * (for their time, a retry, an open circuit, or a person fixing their account) are dead as
 * `expired`, without an attempt: stale content is not published late (docs/delivery.md "Retry timing"). Runs every poll
 * interval on the partial index jobs_publish_by; SKIP LOCKED so sweeps of several processes and
 * a person's edit never wait on each other.
 */
const SQL = `UPDATE job_state SET status = 'dead', dead_reason = 'expired', finished_at = now(), updated_at = now(),
              last_error = 'publishBy (' || to_char(publish_by AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') || ') passed before the job could be published'
       WHERE job_id IN (
         SELECT job_id FROM job_state
         WHERE ${guard('expire')} AND publish_by IS NOT NULL AND publish_by < now()
         LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING job_id`;

export async function expireDeadlines(q: Sql, limit = 1000): Promise<string[]> {
  const rows: { job_id: string }[] = await q.query(SQL, [limit]);
  return rows.map((r) => r.job_id);
}
