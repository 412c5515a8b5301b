import { Injectable } from '@nestjs/common';
import type { Keyset, Listed } from '../common/pagination';
import { Db } from '../database/db';
import type { MediaInfo, MediaMimeType } from './media.types';

/** Never `SELECT *`: the bytes are read only by the methods that need them. */
const INFO_COLUMNS = `
  id, workspace_id AS "workspaceId", mime_type AS "mimeType", byte_size AS "byteSize", width, height, alt,
  encode(sha256, 'hex') AS sha256, created_at AS "createdAt"`;

/** SQL of the media table. Every method but `readForServing` is scoped by workspace. */
@Injectable()
export class MediaRepository {
  constructor(private readonly db: Db) {}

  /**
   * Inserts the media row and counts it in the workspace's usage in one statement, only if the
   * usage stays within the quota; null when it would not (nothing is written). The usage row's
   * lock makes a workspace's concurrent uploads take turns, so they cannot overshoot together.
   * created_at is kept to the millisecond, the precision of list cursors, so a page never skips
   * a row created in the same millisecond as the last one shown.
   */
  async insertWithinQuota(
    input: {
      workspaceId: string;
      mimeType: MediaMimeType;
      width: number | null;
      height: number | null;
      alt: string;
      sha256: Buffer;
      bytes: Buffer;
    },
    quota: { bytes: number; count: number },
  ): Promise<MediaInfo | null> {
    const rows = await this.db.query<MediaInfo>(
      `WITH usage AS (
         INSERT INTO media_usage AS u (workspace_id, bytes, items) VALUES ($1, $3, 1)
         ON CONFLICT (workspace_id) DO UPDATE SET bytes = u.bytes + EXCLUDED.bytes, items = u.items + 1
           WHERE u.bytes + EXCLUDED.bytes <= $9 AND u.items + 1 <= $10
         RETURNING workspace_id
       )
       INSERT INTO media (workspace_id, mime_type, byte_size, width, height, alt, sha256, bytes, created_at)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8, date_trunc('milliseconds', now()) FROM usage
       RETURNING ${INFO_COLUMNS}`,
      [
        input.workspaceId,
        input.mimeType,
        input.bytes.length,
        input.width,
        input.height,
        input.alt,
        input.sha256,
        input.bytes,
        quota.bytes,
        quota.count,
      ],
    );
    return rows[0] ?? null;
  }

  /** What the workspace's media take now. */
  async usage(workspaceId: string): Promise<{ bytes: number; count: number }> {
    const rows = await this.db.query<{ bytes: string; count: number }>(
      `SELECT bytes::text AS bytes, items AS count FROM media_usage WHERE workspace_id = $1`,
      [workspaceId],
    );
    return { bytes: Number(rows[0]?.bytes ?? 0), count: rows[0]?.count ?? 0 };
  }

  /** The workspace's media, newest first, without bytes. */
  list(workspaceId: string, after: Keyset | null, limit: number): Promise<Listed<MediaInfo>[]> {
    return this.db.query<Listed<MediaInfo>>(
      `SELECT ${INFO_COLUMNS}, (extract(epoch FROM created_at) * 1000000)::bigint::text AS "cursorMicros" FROM media
       WHERE workspace_id = $1
         AND ($2::bigint IS NULL OR (created_at, id) < ('epoch'::timestamptz + $2::bigint * interval '1 microsecond', $3::uuid))
       ORDER BY created_at DESC, id DESC LIMIT $4`,
      [workspaceId, after?.micros ?? null, after?.id ?? null, limit + 1],
    );
  }

  /**
   * Deletes a media row of the workspace and takes it off the workspace's usage, in one
   * statement; false when the id is unknown here (or another workspace's).
   */
  async delete(workspaceId: string, id: string): Promise<boolean> {
    const rows = await this.db.query<{ id: string }>(
      `WITH gone AS (DELETE FROM media WHERE workspace_id = $1 AND id = $2 RETURNING id, byte_size),
       counted AS (
         UPDATE media_usage u SET bytes = u.bytes - gone.byte_size, items = u.items - 1
         FROM gone WHERE u.workspace_id = $1
       )
       SELECT id FROM gone`,
      [workspaceId, id],
    );
    return rows.length > 0;
  }

  async find(workspaceId: string, id: string): Promise<MediaInfo | null> {
    const rows = await this.db.query<MediaInfo>(`SELECT ${INFO_COLUMNS} FROM media WHERE workspace_id = $1 AND id = $2`, [workspaceId, id]);
    return rows[0] ?? null;
  }

  /** The workspace's media among `ids`, without bytes (unknown and other workspaces' ids are absent). */
  findMany(workspaceId: string, ids: string[]): Promise<MediaInfo[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.db.query<MediaInfo>(`SELECT ${INFO_COLUMNS} FROM media WHERE workspace_id = $1 AND id = ANY($2::uuid[])`, [
      workspaceId,
      ids,
    ]);
  }

  /** The bytes of one media item of the workspace, or null when it is gone. */
  async readBytes(workspaceId: string, id: string): Promise<Buffer | null> {
    const rows = await this.db.query<{ bytes: Buffer }>(`SELECT bytes FROM media WHERE workspace_id = $1 AND id = $2`, [workspaceId, id]);
    return rows[0]?.bytes ?? null;
  }

  /**
   * For GET /media/:id: not scoped by workspace because the caller has no API key; the signed
   * URL (checked before this call) is the authorization.
   */
  async readForServing(id: string): Promise<{ bytes: Buffer; mimeType: MediaMimeType; sha256: string } | null> {
    const rows = await this.db.query<{ bytes: Buffer; mimeType: MediaMimeType; sha256: string }>(
      `SELECT bytes, mime_type AS "mimeType", encode(sha256, 'hex') AS sha256 FROM media WHERE id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }

  async updateAlt(workspaceId: string, id: string, alt: string): Promise<MediaInfo | null> {
    const rows = await this.db.query<MediaInfo>(`UPDATE media SET alt = $3 WHERE workspace_id = $1 AND id = $2 RETURNING ${INFO_COLUMNS}`, [
      workspaceId,
      id,
      alt,
    ]);
    return rows[0] ?? null;
  }
}
