import { Injectable } from '@nestjs/common';
import type { Keyset } from '../common/pagination';
import { Db } from '../database/db';
import type { ShareLinkRow } from './review.types';

const COLUMNS = `l.id, l.workspace_id AS "workspaceId", l.created_by_kind AS "createdByKind", l.created_by_id AS "createdById",
  l.created_by_label AS "createdByLabel", l.created_at AS "createdAt", l.expires_at AS "expiresAt", l.revoked_at AS "revokedAt",
  (extract(epoch FROM l.created_at) * 1000000)::bigint::text AS "cursorMicros",
  COALESCE((SELECT array_agg(sp.post_id::text ORDER BY sp.position) FROM share_link_posts sp WHERE sp.share_link_id = l.id), '{}') AS "postIds"`;

export interface NewShareLink {
  workspaceId: string;
  tokenHash: Buffer;
  createdByKind: 'person' | 'key';
  createdById: string;
  createdByLabel: string;
  createdAt: Date;
  expiresAt: Date;
  postIds: string[];
}

class UnknownPost extends Error {}

/** SQL of share_links and share_link_posts: client review links and the posts each shows (src/review owns them). */
@Injectable()
export class ShareLinksRepository {
  constructor(private readonly db: Db) {}

  /**
   * The link and its posts in one statement. Only posts of the workspace are linked: the count
   * linked comes back so the service can tell an unknown (or another workspace's) id, and the
   * transaction rolls the link back then.
   */
  async insert(link: NewShareLink): Promise<ShareLinkRow | null> {
    try {
      return await this.db.transaction(async (tx) => {
        const made = await tx.query<{ id: string }>(
          `INSERT INTO share_links (workspace_id, token_hash, created_by_kind, created_by_id, created_by_label, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
          [link.workspaceId, link.tokenHash, link.createdByKind, link.createdById, link.createdByLabel, link.createdAt, link.expiresAt],
        );
        const id = made[0].id;
        const linked = await tx.query<{ post_id: string }>(
          `INSERT INTO share_link_posts (share_link_id, post_id, position)
         SELECT $1, p.id, g.position - 1 FROM unnest($3::uuid[]) WITH ORDINALITY AS g(post_id, position)
           JOIN posts p ON p.id = g.post_id AND p.workspace_id = $2
         RETURNING post_id`,
          [id, link.workspaceId, link.postIds],
        );
        // Thrown to roll the link back: a post the workspace does not have.
        if (linked.length !== link.postIds.length) throw new UnknownPost();
        const rows = await tx.query<ShareLinkRow>(`SELECT ${COLUMNS} FROM share_links l WHERE l.id = $1`, [id]);
        return rows[0];
      });
    } catch (err) {
      if (err instanceof UnknownPost) return null;
      throw err;
    }
  }

  /** A link by its token's hash, whatever its state (the service decides what an expired one shows: nothing). */
  async findByHash(tokenHash: Buffer): Promise<ShareLinkRow | null> {
    const rows = await this.db.prepared<ShareLinkRow>(
      'herald_share_link_by_hash',
      `SELECT ${COLUMNS} FROM share_links l WHERE l.token_hash = $1`,
      [tokenHash],
    );
    return rows[0] ?? null;
  }

  async find(workspaceId: string, id: string): Promise<ShareLinkRow | null> {
    const rows = await this.db.query<ShareLinkRow>(`SELECT ${COLUMNS} FROM share_links l WHERE l.id = $1 AND l.workspace_id = $2`, [
      id,
      workspaceId,
    ]);
    return rows[0] ?? null;
  }

  /** The workspace's links, newest first; with `postId`, only those that show it. */
  list(workspaceId: string, postId: string | null, after: Keyset | null, limit: number): Promise<ShareLinkRow[]> {
    return this.db.query<ShareLinkRow>(
      `SELECT ${COLUMNS} FROM share_links l
        WHERE l.workspace_id = $1
          AND ($2::uuid IS NULL OR EXISTS (SELECT 1 FROM share_link_posts sp WHERE sp.share_link_id = l.id AND sp.post_id = $2))
          AND ($3::bigint IS NULL OR (l.created_at, l.id) < ('epoch'::timestamptz + $3::bigint * interval '1 microsecond', $4::uuid))
        ORDER BY l.created_at DESC, l.id DESC LIMIT $5`,
      [workspaceId, postId, after?.micros ?? null, after?.id ?? null, limit + 1],
    );
  }

  /** Revokes a link once (a second revoke keeps the first instant); null for an unknown id. */
  async revoke(workspaceId: string, id: string, now: Date): Promise<ShareLinkRow | null> {
    const rows = await this.db.query<{ id: string }>(
      `UPDATE share_links SET revoked_at = COALESCE(revoked_at, $3) WHERE id = $1 AND workspace_id = $2 RETURNING id`,
      [id, workspaceId, now],
    );
    return rows[0] ? this.find(workspaceId, id) : null;
  }
}
