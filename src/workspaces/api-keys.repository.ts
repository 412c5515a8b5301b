import { Injectable } from '@nestjs/common';
import type { Keyset, Listed } from '../common/pagination';
import { Db, Sql } from '../database/db';
import { ApiKeyEntity, ApiKeyRole } from './api-key.entity';

const COLUMNS = `id, workspace_id AS "workspaceId", name, key_hash AS "keyHash", prefix, role,
  created_at AS "createdAt", revoked_at AS "revokedAt"`;

@Injectable()
export class ApiKeysRepository {
  constructor(private readonly db: Db) {}

  /**
   * Any key with this hash, revoked or not: the guard checks revocation itself. Runs on every
   * API request: a prepared statement.
   */
  async findByHash(keyHash: Buffer, q: Sql = this.db): Promise<ApiKeyEntity | null> {
    const rows = await q.prepared<ApiKeyEntity>('herald_api_key_by_hash', `SELECT ${COLUMNS} FROM api_keys WHERE key_hash = $1`, [keyHash]);
    return rows[0] ?? null;
  }

  /** A key by id, revoked or not (the settings page checks that its session's key is still active). */
  async findById(id: string, q: Sql = this.db): Promise<ApiKeyEntity | null> {
    const rows = await q.query<ApiKeyEntity>(`SELECT ${COLUMNS} FROM api_keys WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  async create(
    input: { workspaceId: string; name: string; keyHash: Buffer; prefix: string; role: ApiKeyRole },
    q: Sql = this.db,
  ): Promise<ApiKeyEntity> {
    const rows = await q.query<ApiKeyEntity>(
      `INSERT INTO api_keys (workspace_id, name, key_hash, prefix, role) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
      [input.workspaceId, input.name, input.keyHash, input.prefix, input.role],
    );
    return rows[0];
  }

  async countActive(q: Sql = this.db): Promise<number> {
    const rows = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM api_keys WHERE revoked_at IS NULL`);
    return rows[0]?.n ?? 0;
  }

  listActive(workspaceId: string, after: Keyset | null, limit: number): Promise<Listed<ApiKeyEntity>[]> {
    return this.db.query<Listed<ApiKeyEntity>>(
      `SELECT ${COLUMNS}, (extract(epoch FROM created_at) * 1000000)::bigint::text AS "cursorMicros" FROM api_keys
       WHERE workspace_id = $1 AND revoked_at IS NULL
         AND ($2::bigint IS NULL OR (created_at, id) < ('epoch'::timestamptz + $2::bigint * interval '1 microsecond', $3::uuid))
       ORDER BY created_at DESC, id DESC LIMIT $4`,
      [workspaceId, after?.micros ?? null, after?.id ?? null, limit + 1],
    );
  }

  /**
   * Revokes every active admin key of the workspace but `keepId`: a bootstrap key replaced by a
   * new HERALD_API_KEY. Returns the ids revoked.
   */
  async revokeOtherAdminKeys(workspaceId: string, keepId: string, q: Sql = this.db): Promise<string[]> {
    const rows = await q.query<{ id: string }>(
      `UPDATE api_keys SET revoked_at = now()
       WHERE workspace_id = $1 AND role = 'admin' AND revoked_at IS NULL AND id <> $2
       RETURNING id`,
      [workspaceId, keepId],
    );
    return rows.map((r) => r.id);
  }

  /** Revokes a key of this workspace; false when the id is unknown here (or another workspace's). */
  async revoke(workspaceId: string, id: string): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE api_keys SET revoked_at = now() WHERE workspace_id = $1 AND id = $2 AND revoked_at IS NULL RETURNING id`,
      [workspaceId, id],
    );
    return rows.length > 0;
  }
}
