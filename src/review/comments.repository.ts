import { Injectable } from '@nestjs/common';
import type { Keyset } from '../common/pagination';
import { Db, Sql } from '../database/db';
import type { CommentRow, NewComment } from './review.types';

const COLUMNS = `id, workspace_id AS "workspaceId", post_id AS "postId", author_kind AS "authorKind", author_id AS "authorId",
  share_link_id AS "shareLinkId", author_name AS "authorName", verdict, body, created_at AS "createdAt",
  (extract(epoch FROM created_at) * 1000000)::bigint::text AS "cursorMicros"`;

/** SQL of post_comments: comments on posts by people, keys and reviewers (src/review owns it). */
@Injectable()
export class CommentsRepository {
  constructor(private readonly db: Db) {}

  /**
   * Inserts a comment on a post of the workspace. The post is checked in the same statement
   * (`SELECT … FROM posts WHERE workspace_id`): a post of another workspace, or one deleted a
   * moment ago, inserts nothing and answers null rather than a foreign-key error.
   */
  async insert(q: Sql | null, c: NewComment): Promise<CommentRow | null> {
    const rows = await (q ?? this.db).query<CommentRow>(
      `INSERT INTO post_comments (workspace_id, post_id, author_kind, author_id, share_link_id, author_name, verdict, body)
       SELECT p.workspace_id, p.id, $3, $4, $5, $6, $7, $8 FROM posts p WHERE p.id = $2 AND p.workspace_id = $1
       RETURNING ${COLUMNS}`,
      [c.workspaceId, c.postId, c.authorKind, c.authorId, c.shareLinkId, c.authorName, c.verdict, c.body],
    );
    return rows[0] ?? null;
  }

  /** A post's comments, oldest first (a conversation reads down), after `after`. */
  list(workspaceId: string, postId: string, after: Keyset | null, limit: number): Promise<CommentRow[]> {
    return this.db.query<CommentRow>(
      `SELECT ${COLUMNS} FROM post_comments
        WHERE workspace_id = $1 AND post_id = $2
          AND ($3::bigint IS NULL OR (created_at, id) > ('epoch'::timestamptz + $3::bigint * interval '1 microsecond', $4::uuid))
        ORDER BY created_at, id LIMIT $5`,
      [workspaceId, postId, after?.micros ?? null, after?.id ?? null, limit + 1],
    );
  }
}
