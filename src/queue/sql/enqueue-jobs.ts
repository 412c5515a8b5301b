/**
 * enqueue (new → scheduled | paused): the jobs of a post, as a data-modifying CTE of the one
 * statement that writes the post (PostsRepository.create).
 *
 * Why a CTE and not a statement of its own: POST /v1/posts writes the post, its jobs, the
 * Idempotency-Key's answer and the wake-up in ONE statement, one network round trip, so an
 * accepted post costs a single commit (measured: 3 round trips per request in all; a
 * transaction of separate statements would add BEGIN, COMMIT and one per table). The SQL that
 * inserts jobs still lives here, with the queue, the only writer of `jobs`.
 *
 * One row per target through unnest (one array per column): one INSERT whatever the number of
 * targets. Each job carries its own copy of the payload, so a later edit of one dead job
 * touches only it. The jobs' foreign key to the post is checked at the end of the statement,
 * when the post row exists.
 *
 * `p` names the statement's parameters ($n) for each column.
 */
export function enqueueJobsCte(p: {
  workspaceId: string;
  postId: string;
  runAt: string;
  publishBy: string;
  createdAt: string;
  ids: string;
  accountIds: string;
  providers: string;
  statuses: string;
  idempotencyKeys: string;
  textOverrides: string;
  payloads: string;
}): string {
  return `INSERT INTO jobs (id, workspace_id, post_id, account_id, provider, status, run_at, publish_by, idempotency_key,
                           text_override, payload, created_at, updated_at)
         SELECT r.id, ${p.workspaceId}, ${p.postId}, r.account_id, r.provider, r.status, ${p.runAt}, ${p.publishBy},
                r.idempotency_key, r.text_override, r.payload, ${p.createdAt}, ${p.createdAt}
         FROM unnest(${p.ids}::uuid[], ${p.accountIds}::uuid[], ${p.providers}::text[], ${p.statuses}::text[],
                     ${p.idempotencyKeys}::text[], ${p.textOverrides}::text[], ${p.payloads}::jsonb[])
           AS r(id, account_id, provider, status, idempotency_key, text_override, payload)`;
}
