import type { Client } from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions, runMigrations } from '../src/database/data-source';
import { createTestDatabase, undoMigrationsThrough, withClient } from './support/database';

/**
 * The migration that names three tables after their owners (1765910000000), on rows, both ways:
 * down gives back the settings_ names of the tables and of every constraint and index on them,
 * up gives the new ones again; the rows survive both.
 */
const TABLES = {
  login_throttle: 'settings_login_throttle',
  page_sessions: 'settings_sessions',
  link_card_fetches: 'settings_link_card_fetches',
};

/** Every constraint and index of `table`, by name, sorted. */
async function namesOn(c: Client, table: string): Promise<string[]> {
  const rows = await c.query<{ name: string }>(
    `SELECT conname AS name FROM pg_constraint WHERE conrelid = $1::regclass
     UNION SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = $1::regclass
     ORDER BY 1`,
    [table],
  );
  return rows.rows.map((r) => r.name);
}

const tableExists = async (c: Client, table: string): Promise<boolean> =>
  (await c.query<{ t: string | null }>(`SELECT to_regclass($1) AS t`, [table])).rows[0].t !== null;

describe('the migration naming tables after their owners', () => {
  it('renames the tables with their constraints and indexes, down and up again, keeping the rows', async () => {
    const { url } = await createTestDatabase();
    const before = await withClient(url, async (c) => {
      const ws = await c.query<{ id: string }>(`INSERT INTO workspaces (name) VALUES ('Owners') RETURNING id`);
      const key = await c.query<{ id: string }>(
        `INSERT INTO api_keys (workspace_id, name, key_hash, prefix, role) VALUES ($1, 'K', sha256('k'::bytea), 'hk_k', 'owner') RETURNING id`,
        [ws.rows[0].id],
      );
      const session = await c.query<{ id: string }>(
        `INSERT INTO page_sessions (token_hash, workspace_id, api_key_id, csrf_token, expires_at)
         VALUES (sha256('t'::bytea), $1, $2, repeat('c', 32), now() + interval '1 hour') RETURNING id`,
        [ws.rows[0].id, key.rows[0].id],
      );
      await c.query(
        `INSERT INTO login_throttle (client, failures, last_failure_at, blocked_until) VALUES ('203.0.113.9', 4, now(), now())`,
      );
      await c.query(`INSERT INTO link_card_fetches (principal, window_opened_at, fetches) VALUES ($1, now(), 3)`, [
        `person:${key.rows[0].id}`,
      ]);
      const names: Record<string, string[]> = {};
      for (const table of Object.keys(TABLES)) names[table] = await namesOn(c, table);
      return { session: session.rows[0].id, names };
    });
    // No constraint or index is left with another table's name.
    for (const [table, names] of Object.entries(before.names)) {
      expect(names.length).toBeGreaterThan(0);
      for (const name of names) expect({ table, name, owned: name.startsWith(`${table}_`) }).toEqual({ table, name, owned: true });
    }

    const ds = new DataSource(dataSourceOptions(url));
    await ds.initialize();
    try {
      await undoMigrationsThrough(ds, 'TablesByOwner1765910000000');
      await withClient(url, async (c) => {
        for (const [now, old] of Object.entries(TABLES)) {
          expect(await tableExists(c, now)).toBe(false);
          expect(await namesOn(c, old)).toEqual(before.names[now].map((n) => `${old}_${n.slice(now.length + 1)}`).sort());
        }
        expect((await c.query(`SELECT client, failures FROM settings_login_throttle`)).rows).toEqual([
          { client: '203.0.113.9', failures: 4 },
        ]);
        expect((await c.query(`SELECT fetches FROM settings_link_card_fetches`)).rows).toEqual([{ fetches: 3 }]);
        expect((await c.query(`SELECT id FROM settings_sessions`)).rows).toEqual([{ id: before.session }]);
      });
      await runMigrations(ds);
    } finally {
      await ds.destroy();
    }

    await withClient(url, async (c) => {
      for (const [now, old] of Object.entries(TABLES)) {
        expect(await tableExists(c, old)).toBe(false);
        expect(await namesOn(c, now)).toEqual(before.names[now]);
      }
      expect((await c.query(`SELECT client, failures FROM login_throttle`)).rows).toEqual([{ client: '203.0.113.9', failures: 4 }]);
      expect((await c.query(`SELECT fetches FROM link_card_fetches`)).rows).toEqual([{ fetches: 3 }]);
      expect((await c.query(`SELECT id FROM page_sessions`)).rows).toEqual([{ id: before.session }]);
    });
  });
});
