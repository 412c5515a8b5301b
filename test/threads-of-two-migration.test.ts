import type { Client } from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions, runMigrations } from '../src/database/data-source';
import { createTestDatabase, undoMigrationsThrough, withClient } from './support/database';

/**
 * The migration that lets a thread have one further part (1765930000000), on rows, both ways: the
 * database takes 1 to 25 further parts and refuses an empty thread or 26 parts (the API's own
 * limits); down holds new rows to the old 2 to 25 again and keeps the threads of two already
 * written; up again takes them.
 */
const parts = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => ({ text: `part ${i + 2}`, link: null, media: [] })));

async function insertThread(c: Client, workspace: string, n: number): Promise<string> {
  const row = await c.query<{ id: string }>(
    `INSERT INTO posts (workspace_id, text, scheduled_at, thread) VALUES ($1, 'first', now(), $2::jsonb) RETURNING id`,
    [workspace, parts(n)],
  );
  return row.rows[0].id;
}

describe('the migration for threads of two', () => {
  it('stores 1 to 25 further parts and refuses 0 and 26; down keeps threads of two and refuses new ones; up takes them again', async () => {
    const { url } = await createTestDatabase();
    const { workspace, two } = await withClient(url, async (c) => {
      const ws = (await c.query<{ id: string }>(`INSERT INTO workspaces (name) VALUES ('Threads') RETURNING id`)).rows[0].id;
      const id = await insertThread(c, ws, 1);
      await insertThread(c, ws, 25);
      await expect(insertThread(c, ws, 0)).rejects.toThrow(/posts_thread_parts/);
      await expect(insertThread(c, ws, 26)).rejects.toThrow(/posts_thread_parts/);
      return { workspace: ws, two: id };
    });

    const ds = new DataSource(dataSourceOptions(url));
    await ds.initialize();
    try {
      await undoMigrationsThrough(ds, 'ThreadsOfTwo1765930000000');
      await withClient(url, async (c) => {
        expect((await c.query(`SELECT jsonb_array_length(thread) AS n FROM posts WHERE id = $1`, [two])).rows).toEqual([{ n: 1 }]);
        await expect(insertThread(c, workspace, 1)).rejects.toThrow(/posts_thread_check/);
        await insertThread(c, workspace, 2);
      });
      await runMigrations(ds);
    } finally {
      await ds.destroy();
    }

    await withClient(url, async (c) => {
      await insertThread(c, workspace, 1);
      await expect(insertThread(c, workspace, 0)).rejects.toThrow(/posts_thread_parts/);
      const names = await c.query<{ name: string }>(
        `SELECT conname AS name FROM pg_constraint WHERE conrelid = 'posts'::regclass AND conname LIKE 'posts_thread%' ORDER BY 1`,
      );
      expect(names.rows.map((r) => r.name)).toEqual(['posts_thread_parts']);
    });
  });
});
