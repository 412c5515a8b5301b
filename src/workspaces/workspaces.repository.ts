import { Injectable } from '@nestjs/common';
import { Db, Sql, Tx } from '../database/db';
import { WorkspaceEntity } from './workspace.entity';

const COLUMNS = `id, name, is_bootstrap AS "isBootstrap", created_at AS "createdAt"`;

@Injectable()
export class WorkspacesRepository {
  constructor(private readonly db: Db) {}

  async create(input: { name: string; isBootstrap?: boolean }, q: Sql = this.db): Promise<WorkspaceEntity> {
    const rows = await q.query<WorkspaceEntity>(`INSERT INTO workspaces (name, is_bootstrap) VALUES ($1, $2) RETURNING ${COLUMNS}`, [
      input.name,
      input.isBootstrap ?? false,
    ]);
    return rows[0];
  }

  /** One workspace by id (null when unknown). */
  async find(id: string, q: Sql = this.db): Promise<WorkspaceEntity | null> {
    const rows = await q.query<WorkspaceEntity>(`SELECT ${COLUMNS} FROM workspaces WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  async findBootstrap(q: Sql = this.db): Promise<WorkspaceEntity | null> {
    const rows = await q.query<WorkspaceEntity>(`SELECT ${COLUMNS} FROM workspaces WHERE is_bootstrap LIMIT 1`);
    return rows[0] ?? null;
  }

  /** Runs `work` in one transaction holding an advisory lock, so concurrent starts serialise. */
  withBootstrapLock<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction(async (tx) => {
      await tx.query(`SELECT pg_advisory_xact_lock(hashtext('herald.bootstrap'))`);
      return work(tx);
    });
  }

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }
}
