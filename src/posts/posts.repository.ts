import { Injectable } from '@nestjs/common';
import { Db, Sql, Tx } from '../database/db';
import { compose, Cte, cte, param, raw, sql, SqlPiece, withCtes } from '../database/statement';
import type { EnqueuedEvents, EnqueuedJobs } from '../queue/job-lifecycle.service';
import type { Keyset, Listed } from '../common/pagination';
import type { PostRow } from './post.types';
import type { PostStatus } from './post-status';

const POST_COLUMNS = `
  p.id, p.workspace_id AS "workspaceId", p.text, p.title, p.link, p.media, p.metadata, p.thread,
  p.scheduled_at AS "scheduledAt", p.publish_by AS "publishBy", p.draft_targets AS "draftTargets", p.approval,
  p.created_at AS "createdAt", p.updated_at AS "updatedAt"`;

export interface PostFilter {
  status?: PostStatus;
  from?: Date;
  to?: Date;
}

/**
 * SQL of posts and the Idempotency-Key's answer written with them (the jobs are the queue's:
 * its pieces are composed into the statements that need them). Every method is scoped by workspace.
 */
@Injectable()
export class PostsRepository {
  constructor(private readonly db: Db) {}

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /**
   * The post, its jobs, its audit entry and the Idempotency-Key's stored answer in ONE statement:
   * it commits as a whole (the API answers 201 only after it returns), and POST /v1/posts costs
   * one round trip and one commit for its writes. The statement is composed of three modules'
   * pieces (database/statement.ts numbers their parameters): the post's INSERT and the key's
   * UPDATE are this module's (CTEs `p` and `k`), the jobs' INSERTs the queue's (JobLifecycle.enqueue:
   * `j_payloads` and `j`, whose rows it counts), the audit entry's the audit module's
   * (AuditService.recordCte: `audit`), post.scheduled's deliveries to the workspace's event
   * endpoints (EventsService.postScheduledCte, the queue's `ev…` CTEs; none without an endpoint),
   * and for a queued post the slots it takes (PostingQueueService.takeCte: `queue_slots`, whose
   * UNIQUE (account, instant) fails the whole statement when another post took one). Its text
   * depends only on that shape, so it is one prepared
   * statement. Workers are woken after the commit.
   */
  async create(
    post: PostRow,
    jobs: EnqueuedJobs,
    idempotency: { key: string; status: number; body: unknown } | null,
    audit: Cte<'audit'>,
    events: EnqueuedEvents,
    more: readonly Cte[] = [],
  ): Promise<{ events: number }> {
    const workspace = param(post.workspaceId);
    const created = param(post.createdAt);
    const key = param(idempotency?.key ?? null);
    const p = cte(
      'p',
      sql`INSERT INTO posts (id, workspace_id, text, title, link, media, metadata, thread, scheduled_at, publish_by, created_at, updated_at)
         VALUES (${param(post.id)}, ${workspace}, ${param(post.text)}, ${param(post.title)}, ${param(post.link)}, ${param(JSON.stringify(post.media))},
                 ${param(post.metadata)}, ${param(post.thread === null ? null : JSON.stringify(post.thread))}, ${param(post.scheduledAt)},
                 ${param(post.publishBy)}, ${created}, ${created})`,
    );
    const k = cte(
      'k',
      sql`UPDATE idempotency_keys SET state = 'completed', response_status = ${param(idempotency?.status ?? null)},
                                       response_body = ${param(idempotency ? JSON.stringify(idempotency.body) : null)}
         WHERE workspace_id = ${workspace} AND key = ${key} AND ${key}::text IS NOT NULL
         RETURNING 1`,
    );
    const { text, values } = compose(
      withCtes(
        [p, ...jobs.ctes, audit, k, ...events.ctes, ...more],
        sql`SELECT (SELECT count(*) FROM ${jobs.rows}) AS jobs, (SELECT count(*) FROM ${k}) AS keys, (SELECT count(*)::int FROM ${events.rows}) AS events`,
      ),
    );
    // `more`: other modules' rows written with the post (the posting queue's slots, `queue_slots`): another text, another name.
    // A guarded enqueue (the accounts and the approval setting checked in this statement) is another text too.
    const name = ['herald_create_post', ...(jobs.guarded ? ['guarded'] : []), ...more.map((c) => c.name)].join('_');
    const [row] = await this.db.prepared<{ events: number }>(name, text, values);
    return { events: row?.events ?? 0 };
  }

  /**
   * A draft, or a post waiting for approval: the post alone, no jobs (the Idempotency-Key's answer
   * in the same statement), in `m`'s transaction when given.
   */
  async createDraft(post: PostRow, idempotency: { key: string; status: number; body: unknown } | null, m: Sql = this.db): Promise<void> {
    await m.query(
      `WITH p AS (
         INSERT INTO posts (id, workspace_id, text, title, link, media, metadata, thread, scheduled_at, publish_by, draft_targets, approval, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $13, $14, $15, $11, $16, $12, $12)
       )
       UPDATE idempotency_keys SET state = 'completed', response_status = $9, response_body = $10
       WHERE workspace_id = $2 AND key = $8 AND $8::text IS NOT NULL`,
      [
        post.id,
        post.workspaceId,
        post.text,
        post.title,
        post.link,
        JSON.stringify(post.media),
        post.metadata,
        idempotency?.key ?? null,
        idempotency?.status ?? null,
        idempotency ? JSON.stringify(idempotency.body) : null,
        JSON.stringify(post.draftTargets),
        post.createdAt,
        post.thread === null ? null : JSON.stringify(post.thread),
        post.scheduledAt,
        post.publishBy,
        post.approval,
      ],
    );
  }

  /**
   * A draft scheduled: its time, deadline and content set and its draft targets cleared, in the
   * statement that writes its jobs (the queue's INSERTs, JobLifecycle.enqueue's CTEs, composed
   * with this UPDATE: database/statement.ts numbers the parameters). False when the post was no
   * longer a draft.
   */
  async scheduleDraft(m: Sql, post: PostRow, jobs: EnqueuedJobs): Promise<boolean> {
    const { text, values } = compose(
      withCtes(
        jobs.ctes,
        sql`UPDATE posts SET text = ${param(post.text)}, title = ${param(post.title)}, link = ${param(post.link)},
                        media = ${param(JSON.stringify(post.media))}, metadata = ${param(post.metadata)},
                        scheduled_at = ${param(post.scheduledAt)}, publish_by = ${param(post.publishBy)},
                        thread = ${param(post.thread === null ? null : JSON.stringify(post.thread))}, draft_targets = NULL, approval = NULL, updated_at = now()
       WHERE workspace_id = ${param(post.workspaceId)} AND id = ${param(post.id)} AND draft_targets IS NOT NULL
       RETURNING (SELECT count(*) FROM ${jobs.rows})::text AS n`,
      ),
    );
    const rows: { n: string }[] = await m.query(text, values);
    return rows.length === 1;
  }

  /** A draft deleted (it never had jobs: nothing of it was queued or sent); a post waiting for approval, or expired, too. */
  async deleteDraft(m: Sql, workspaceId: string, id: string): Promise<void> {
    await m.query(`DELETE FROM posts WHERE workspace_id = $1 AND id = $2 AND draft_targets IS NOT NULL`, [workspaceId, id]);
  }

  async find(workspaceId: string, id: string, m?: Sql, lock = false): Promise<PostRow | null> {
    const rows: PostRow[] = await (m ?? this.db).query(
      `SELECT ${POST_COLUMNS} FROM posts p WHERE p.workspace_id = $1 AND p.id = $2 ${lock ? 'FOR UPDATE' : ''}`,
      [workspaceId, id],
    );
    return rows[0] ?? null;
  }

  /**
   * Newest first. The status filter is said in the statement, so a page holds `limit` posts of
   * that status: `draft` here (a post with draft targets), any other from the post's jobs by the
   * queue's one derivation (`statusFromJobs`: JobReads.postStatusOf, a piece of this statement
   * given the post's id column), evaluated only when a status is asked for.
   */
  list(
    workspaceId: string,
    filter: PostFilter,
    after: Keyset | null,
    limit: number,
    statusFromJobs: (postId: SqlPiece) => SqlPiece,
  ): Promise<Listed<PostRow>[]> {
    const micros = param(after?.micros ?? null);
    const from = param(filter.from ?? null);
    const to = param(filter.to ?? null);
    const status = param(filter.status ?? null);
    const { text, values } = compose(
      sql`SELECT ${raw(POST_COLUMNS)}, (extract(epoch FROM p.created_at) * 1000000)::bigint::text AS "cursorMicros" FROM posts p
       WHERE p.workspace_id = ${param(workspaceId)}
         AND (${micros}::bigint IS NULL OR (p.created_at, p.id) < ('epoch'::timestamptz + ${micros}::bigint * interval '1 microsecond', ${param(after?.id ?? null)}::uuid))
         AND (${from}::timestamptz IS NULL OR p.scheduled_at >= ${from})
         AND (${to}::timestamptz IS NULL OR p.scheduled_at < ${to})
         AND (${status}::text IS NULL OR (CASE WHEN p.approval = 'pending' THEN 'pending_approval' WHEN p.approval = 'expired' THEN 'expired' WHEN p.draft_targets IS NOT NULL THEN 'draft' ELSE ${statusFromJobs(sql`p.id`)} END) = ${status})
       ORDER BY p.created_at DESC, p.id DESC LIMIT ${param(limit + 1)}`,
    );
    return this.db.query(text, values);
  }

  async update(m: Sql, post: PostRow): Promise<void> {
    await m.query(
      `UPDATE posts SET text = $3, title = $4, link = $5, media = $6, metadata = $7, scheduled_at = $8, publish_by = $9, thread = $10,
                        draft_targets = $11, approval = $12, updated_at = now()
       WHERE workspace_id = $1 AND id = $2`,
      [
        post.workspaceId,
        post.id,
        post.text,
        post.title,
        post.link,
        JSON.stringify(post.media),
        post.metadata,
        post.scheduledAt,
        post.publishBy,
        post.thread === null ? null : JSON.stringify(post.thread),
        post.draftTargets === null ? null : JSON.stringify(post.draftTargets),
        post.approval,
      ],
    );
  }
}
