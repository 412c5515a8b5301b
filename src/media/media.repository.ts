import { Injectable } from '@nestjs/common';
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

  async insert(input: {
    workspaceId: string;
    mimeType: MediaMimeType;
    width: number | null;
    height: number | null;
    alt: string;
    sha256: Buffer;
    bytes: Buffer;
  }): Promise<MediaInfo> {
    const rows = await this.db.query<MediaInfo>(
      `INSERT INTO media (workspace_id, mime_type, byte_size, width, height, alt, sha256, bytes)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${INFO_COLUMNS}`,
      [input.workspaceId, input.mimeType, input.bytes.length, input.width, input.height, input.alt, input.sha256, input.bytes],
    );
    return rows[0]!;
  }

  async find(workspaceId: string, id: string): Promise<MediaInfo | null> {
    const rows = await this.db.query<MediaInfo>(`SELECT ${INFO_COLUMNS} FROM media WHERE workspace_id = $1 AND id = $2`, [workspaceId, id]);
    return rows[0] ?? null;
  }

  /** The workspace's media among `ids`, without bytes (unknown and other workspaces' ids are absent). */
  findMany(workspaceId: string, ids: string[]): Promise<MediaInfo[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.db.query<MediaInfo>(`SELECT ${INFO_COLUMNS} FROM media WHERE workspace_id = $1 AND id = ANY($2::uuid[])`, [workspaceId, ids]);
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
    const rows = await this.db.query<MediaInfo>(
      `UPDATE media SET alt = $3 WHERE workspace_id = $1 AND id = $2 RETURNING ${INFO_COLUMNS}`,
      [workspaceId, id, alt],
    );
    return rows[0] ?? null;
  }
}
