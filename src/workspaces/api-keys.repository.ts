import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, IsNull } from 'typeorm';
import type { Keyset } from '../common/pagination';
import { prepared, sql } from '../database/sql';
import { ApiKeyEntity, ApiKeyRole } from './api-key.entity';

@Injectable()
export class ApiKeysRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  private repo(manager?: EntityManager) {
    return (manager ?? this.db.manager).getRepository(ApiKeyEntity);
  }

  /**
   * Any key with this hash, revoked or not: the guard checks revocation itself. Runs on every
   * API request, so it is one indexed SELECT without the ORM's query building.
   */
  async findByHash(keyHash: Buffer, manager?: EntityManager): Promise<ApiKeyEntity | null> {
    const text = `SELECT id, workspace_id AS "workspaceId", name, key_hash AS "keyHash", prefix, role,
              created_at AS "createdAt", revoked_at AS "revokedAt"
       FROM api_keys WHERE key_hash = $1`;
    const rows = manager
      ? await sql<ApiKeyEntity>(manager, text, [keyHash])
      : await prepared<ApiKeyEntity>(this.db, 'herald_api_key_by_hash', text, [keyHash]);
    return rows[0] ?? null;
  }

  create(
    input: { workspaceId: string; name: string; keyHash: Buffer; prefix: string; role: ApiKeyRole },
    manager?: EntityManager,
  ): Promise<ApiKeyEntity> {
    const repo = this.repo(manager);
    return repo.save(repo.create({ ...input, revokedAt: null }));
  }

  countActive(manager?: EntityManager): Promise<number> {
    return this.repo(manager).count({ where: { revokedAt: IsNull() } });
  }

  listActive(workspaceId: string, after: Keyset | null, limit: number): Promise<ApiKeyEntity[]> {
    const qb = this.repo()
      .createQueryBuilder('k')
      .where('k.workspace_id = :workspaceId AND k.revoked_at IS NULL', { workspaceId })
      .orderBy('k.created_at', 'DESC')
      .addOrderBy('k.id', 'DESC')
      .limit(limit + 1);
    if (after) qb.andWhere('(k.created_at, k.id) < (:createdAt, :id)', after);
    return qb.getMany();
  }

  /** Revokes a key of this workspace; false when the id is unknown here (or another workspace's). */
  async revoke(workspaceId: string, id: string): Promise<boolean> {
    const result = await this.repo().update({ id, workspaceId, revokedAt: IsNull() }, { revokedAt: () => 'now()' });
    return (result.affected ?? 0) > 0;
  }
}
