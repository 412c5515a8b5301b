import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { WorkspaceEntity } from './workspace.entity';

@Injectable()
export class WorkspacesRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  private repo(manager?: EntityManager) {
    return (manager ?? this.db.manager).getRepository(WorkspaceEntity);
  }

  create(input: { name: string; isBootstrap?: boolean }, manager?: EntityManager): Promise<WorkspaceEntity> {
    const repo = this.repo(manager);
    return repo.save(repo.create({ name: input.name, isBootstrap: input.isBootstrap ?? false }));
  }

  /** One workspace by id (null when unknown). */
  find(id: string, manager?: EntityManager): Promise<WorkspaceEntity | null> {
    return this.repo(manager).findOne({ where: { id } });
  }

  findBootstrap(manager?: EntityManager): Promise<WorkspaceEntity | null> {
    return this.repo(manager).findOne({ where: { isBootstrap: true } });
  }

  /** Runs `work` in one transaction holding an advisory lock, so concurrent starts serialise. */
  withBootstrapLock<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(async (manager) => {
      await manager.query(`SELECT pg_advisory_xact_lock(hashtext('herald.bootstrap'))`);
      return work(manager);
    });
  }

  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }
}
