import { Client } from 'pg';
import type { DataSource, DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../migrations';
import { connectionOptions } from './connection-options';

/**
 * TypeORM is Herald's migration runner: migrations are TypeORM classes with hand-written SQL.
 * Everything else reaches the database through Db (db.ts). It is loaded only when a migration
 * is pending (`migrate`): a process starting on an up-to-date schema never loads it, which keeps
 * its code and metadata out of every process's memory (docs/benchmarks.md, "Peak RSS").
 */
export function dataSourceOptions(url: string, poolSize = 2): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: [],
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    // Never: the schema is what the migrations say, nothing else.
    synchronize: false,
    migrationsRun: false,
    logging: false,
    extra: { ...connectionOptions(url, 'migrations'), max: poolSize },
  };
}

/**
 * Runs pending migrations under a session advisory lock, so that several processes
 * starting at once against one database migrate it exactly once; the others wait and
 * then find nothing to do.
 */
export async function runMigrations(dataSource: DataSource): Promise<void> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query(`SELECT pg_advisory_lock(hashtext('herald.migrations'))`);
    try {
      await dataSource.runMigrations({ transaction: 'each' });
    } finally {
      await runner.query(`SELECT pg_advisory_unlock(hashtext('herald.migrations'))`);
    }
  } finally {
    await runner.release();
  }
}

/**
 * Brings the schema up to date at start, on short-lived connections (two: one holds the
 * advisory lock, the other migrates), closed before the application's pool opens. When the
 * `migrations` table already lists every migration this build knows, there is nothing to do and
 * TypeORM is not loaded; otherwise TypeORM runs them under the lock as always (a process that
 * finds one pending while another migrates waits on the lock, then finds nothing left to run).
 */
export async function migrate(url: string): Promise<void> {
  if (await upToDate(url)) return;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { DataSource } = require('typeorm') as typeof import('typeorm');
  const dataSource = await new DataSource(dataSourceOptions(url)).initialize();
  try {
    await runMigrations(dataSource);
  } finally {
    await dataSource.destroy();
  }
}

/** Names of the migrations this build knows, as the `migrations` table records them. */
export function knownMigrationNames(): string[] {
  return MIGRATIONS.map((M) => new M().name ?? M.name);
}

/** Whether the `migrations` table lists every migration this build knows (false without the table). */
async function upToDate(url: string): Promise<boolean> {
  const client = new Client(connectionOptions(url, 'migrations'));
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>('SELECT name FROM migrations');
    const applied = new Set(rows.map((r) => r.name));
    return knownMigrationNames().every((n) => applied.has(n));
  } catch (err) {
    // A new database has no migrations table yet (undefined_table): everything is pending.
    if ((err as { code?: string }).code === '42P01') return false;
    throw err;
  } finally {
    await client.end();
  }
}

/** Creates `database` on the server of `url` if it does not exist yet; returns its URL. */
export async function ensureDatabase(url: string, database: string): Promise<string> {
  const client = new Client(connectionOptions(url, 'bootstrap'));
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (exists.rowCount === 0) {
      try {
        await client.query(`CREATE DATABASE "${database.replace(/"/g, '""')}"`);
      } catch (err) {
        // Another process created it between our check and our CREATE.
        if ((err as { code?: string }).code !== '42P04') throw err;
      }
    }
  } finally {
    await client.end();
  }
  const target = new URL(url);
  target.pathname = `/${database}`;
  return target.toString();
}
