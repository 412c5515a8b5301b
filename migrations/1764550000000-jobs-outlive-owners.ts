import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Jobs are the queue's rows: only its own operations change or end them (src/queue/sql). Their
 * foreign keys to workspaces, posts and accounts deleted them along with those rows (ON DELETE
 * CASCADE), behind the queue's back: a job in flight would vanish under its worker, its attempt
 * history with it. Herald never deletes those rows (a post is cancelled and an account is
 * soft-deleted; their jobs stay, cancelled, with their history), so the schema now refuses
 * such a delete while the row has jobs (RESTRICT) instead of silently taking them along.
 */
export class JobsOutliveOwners1764550000000 implements MigrationInterface {
  name = 'JobsOutliveOwners1764550000000';

  async up(q: QueryRunner): Promise<void> {
    await this.foreignKeys(q, 'RESTRICT');
  }

  async down(q: QueryRunner): Promise<void> {
    await this.foreignKeys(q, 'CASCADE');
  }

  private async foreignKeys(q: QueryRunner, onDelete: 'RESTRICT' | 'CASCADE'): Promise<void> {
    for (const [column, table] of [
      ['workspace_id', 'workspaces'],
      ['post_id', 'posts'],
      ['account_id', 'accounts'],
    ]) {
      await q.query(`ALTER TABLE jobs DROP CONSTRAINT jobs_${column}_fkey`);
      await q.query(
        `ALTER TABLE jobs ADD CONSTRAINT jobs_${column}_fkey FOREIGN KEY (${column}) REFERENCES ${table}(id) ON DELETE ${onDelete}`,
      );
    }
  }
}
