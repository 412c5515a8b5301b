import type { Sql } from '../../database/db';

/**
 * Posts of the workspace with a job that may still send media `mediaId`: waiting (scheduled,
 * paused), in flight, or dead (a person may requeue it). DELETE /v1/media/:id refuses while
 * there is one, naming them. A job's payload is the truth (a DLQ edit can change its media
 * apart from its post's), a thread's parts included. Drafts count too: they have no jobs yet,
 * and the post itself (its media, its thread) is what scheduling it will send. Reached through
 * the workspace's posts, so the cost follows the workspace's own volume; deleting media is rare.
 */
export function postsNeedingMedia(q: Sql, workspaceId: string, mediaId: string, limit: number): Promise<{ postId: string }[]> {
  return q.query(
    `SELECT "postId" FROM (
       SELECT j.post_id AS "postId" FROM posts p JOIN jobs j ON j.post_id = p.id
       WHERE p.workspace_id = $1 AND j.status IN ('scheduled', 'paused', 'in_progress', 'dead')
         AND (j.payload->'media' ? $2
              OR EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(j.payload->'thread', '[]')) part WHERE part->'media' ? $2))
       UNION
       SELECT p.id FROM posts p
       WHERE p.workspace_id = $1 AND p.draft_targets IS NOT NULL
         AND (p.media ? $2
              OR EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(p.thread, '[]')) part WHERE part->'media' ? $2))
     ) needing
     ORDER BY 1 LIMIT $3`,
    [workspaceId, mediaId, limit],
  );
}
