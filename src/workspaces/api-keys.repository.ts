import { Injectable } from '@nestjs/common';
import type { Keyset, Listed } from '../common/pagination';
import { Db, Sql } from '../database/db';
import { compose, EmbeddedRead, param, raw, sql } from '../database/statement';
import type { Role } from '../access/roles';
import { ApiKeyEntity } from './api-key.entity';

const COLUMNS = `id, workspace_id AS "workspaceId", name, key_hash AS "keyHash", prefix, role, bootstrap,
  created_at AS "createdAt", revoked_at AS "revokedAt", replaced_by AS "replacedBy"`;

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

  /**
   * `findByHash` carrying another module's read (the login throttle's count of the client's wrong
   * keys: database/statement.ts EmbeddedRead), so the API key guard costs one statement per
   * request. One row whether or not the key exists (the read is answered either way): the key's
   * columns are null when there is none.
   */
  async findByHashCarrying(keyHash: Buffer, carried: EmbeddedRead): Promise<ApiKeyEntity | null> {
    const { text, values } = compose(
      sql`SELECT ${raw(COLUMNS)}, ${carried.piece} AS carried FROM (VALUES (1)) AS one (x) LEFT JOIN api_keys ON key_hash = ${param(keyHash)}`,
    );
    const [row] = await this.db.prepared<ApiKeyEntity & { carried: unknown }>(`herald_api_key_by_hash_${carried.name}`, text, values);
    carried.take(row?.carried ?? null);
    if (!row || row.id === null) return null;
    const { carried: _, ...key } = row;
    return key;
  }

  /** A key by id, revoked or not (the settings page checks that its session's key is still active). */
  async findById(id: string, q: Sql = this.db): Promise<ApiKeyEntity | null> {
    const rows = await q.query<ApiKeyEntity>(`SELECT ${COLUMNS} FROM api_keys WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  async create(
    input: { workspaceId: string; name: string; keyHash: Buffer; prefix: string; role: Role; bootstrap?: boolean },
    q: Sql = this.db,
  ): Promise<ApiKeyEntity> {
    const rows = await q.query<ApiKeyEntity>(
      `INSERT INTO api_keys (workspace_id, name, key_hash, prefix, role, bootstrap) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
      [input.workspaceId, input.name, input.keyHash, input.prefix, input.role, input.bootstrap ?? false],
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
   * Retires every other bootstrap key still active: a new HERALD_API_KEY replaced them (marked
   * `replaced_by`, so a start with an outdated value cannot bring them back). Returns their ids.
   */
  async replaceOtherBootstrapKeys(keepId: string, q: Sql = this.db): Promise<string[]> {
    const rows = await q.query<{ id: string }>(
      `UPDATE api_keys SET revoked_at = now(), replaced_by = $1
       WHERE bootstrap AND revoked_at IS NULL AND id <> $1
       RETURNING id`,
      [keepId],
    );
    return rows.map((r) => r.id);
  }

  /** Makes a bootstrap key revoked (not replaced) usable again, with its rights. */
  async restoreBootstrap(id: string, q: Sql = this.db): Promise<void> {
    await q.query(`UPDATE api_keys SET revoked_at = NULL, role = 'owner', bootstrap = true WHERE id = $1 AND replaced_by IS NULL`, [id]);
  }

  /** An active key of this workspace, locked until the caller's transaction ends (null: none here). */
  async lockActive(q: Sql, workspaceId: string, id: string): Promise<ApiKeyEntity | null> {
    const rows = await q.query<ApiKeyEntity>(
      `SELECT ${COLUMNS} FROM api_keys WHERE workspace_id = $1 AND id = $2 AND revoked_at IS NULL FOR UPDATE`,
      [workspaceId, id],
    );
    return rows[0] ?? null;
  }

  async revoke(q: Sql, id: string): Promise<void> {
    await q.query(`UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL`, [id]);
  }
}
