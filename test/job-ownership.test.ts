import { randomUUID } from 'node:crypto';
import type { Client } from 'pg';
import { createTestDatabase, withClient } from './support/database';

/**
 * Jobs belong to the queue: a delete of their workspace, post or account must not take them
 * along behind its back (migrations/1764550000000-jobs-outlive-owners.ts). PostgreSQL refuses it
 * (foreign_key_violation), and the job and its attempt history stay.
 */
describe('jobs outlive the rows they point to', () => {
  let url: string;
  let ids: { workspace: string; account: string; post: string; job: string };

  beforeAll(async () => {
    url = (await createTestDatabase()).url;
    ids = { workspace: randomUUID(), account: randomUUID(), post: randomUUID(), job: randomUUID() };
    await withClient(url, async (db) => {
      await db.query(`INSERT INTO workspaces (id, name) VALUES ($1, 'W')`, [ids.workspace]);
      await db.query(`INSERT INTO accounts (id, workspace_id, provider, name, credentials) VALUES ($1, $2, 'webhook', 'Blog', 'x')`, [
        ids.account,
        ids.workspace,
      ]);
      await db.query(`INSERT INTO posts (id, workspace_id, text, scheduled_at) VALUES ($1, $2, 'hello', now())`, [ids.post, ids.workspace]);
      await db.query(
        `WITH p AS (
           INSERT INTO job_payloads (id, workspace_id, post_id, account_id, provider, idempotency_key, payload)
           VALUES ($1::uuid, $2, $3, $4, 'webhook', $1::uuid::text, '{}')
         )
         INSERT INTO job_state (job_id, workspace_id, account_id, status, run_at) VALUES ($1::uuid, $2, $4, 'scheduled', now())`,
        [ids.job, ids.workspace, ids.post, ids.account],
      );
    });
  });

  const refused = async (db: Client, sql: string, id: string) => {
    await expect(db.query(sql, [id])).rejects.toMatchObject({ code: '23503', constraint: expect.stringMatching(/^jobs_/) });
  };

  it.each([
    ['its post', 'DELETE FROM posts WHERE id = $1', 'post'],
    ['its account', 'DELETE FROM accounts WHERE id = $1', 'account'],
    ['its workspace', 'DELETE FROM workspaces WHERE id = $1', 'workspace'],
  ] as const)('refuses to delete %s while the job exists, and the job stays as it was', async (_what, sql, key) => {
    await withClient(url, async (db) => {
      await refused(db, sql, ids[key]);
      const { rows } = await db.query(`SELECT status FROM jobs WHERE id = $1`, [ids.job]);
      expect(rows).toEqual([{ status: 'scheduled' }]);
    });
  });
});
