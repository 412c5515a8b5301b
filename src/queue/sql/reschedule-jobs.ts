import type { Sql } from '../../database/db';
import type { JobPayload } from '../../connectors/connector.interface';
import { guard } from '../job-lifecycle';

/**
 * reschedule (scheduled → scheduled, paused → paused): a post edited or moved before any of its
 * jobs started. Each job gets its payload rebuilt from the post and its previous payload (its own
 * text override and settings kept), the post's new
 * run time and publishBy. The caller holds the jobs' row locks (PostsService.update checked that
 * none started), so no worker can claim one in between.
 */
const SQL = `WITH s AS (
               UPDATE job_state j SET run_at = $2, publish_by = $3, updated_at = now()
               WHERE j.job_id = ANY($1::uuid[]) AND ${guard('reschedule', 'j.status')}
               RETURNING j.job_id
             )
             UPDATE job_payloads p SET payload = r.payload
             FROM unnest($1::uuid[], $4::jsonb[]) AS r(id, payload), s
             WHERE p.id = r.id AND s.job_id = r.id`;
const WAITING = `SELECT j.job_id AS id, p.text_override AS "textOverride", p.payload FROM job_state j JOIN job_payloads p ON p.id = j.job_id
                 WHERE p.post_id = $1 AND ${guard('reschedule', 'j.status')}`;

export async function reschedulePostJobs(
  q: Sql,
  postId: string,
  runAt: Date,
  publishBy: Date | null,
  payloadFor: (textOverride: string | null, previous: JobPayload) => JobPayload,
): Promise<number> {
  const jobs = await q.query<{ id: string; textOverride: string | null; payload: JobPayload }>(WAITING, [postId]);
  if (jobs.length === 0) return 0;
  await q.query(SQL, [jobs.map((j) => j.id), runAt, publishBy, jobs.map((j) => JSON.stringify(payloadFor(j.textOverride, j.payload)))]);
  return jobs.length;
}
