import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { Client } from 'pg';
import { ENV_ADMIN_URL, ENV_RUN_ID, ENV_TEMPLATE, requireEnv, withDatabase } from './env';

/** A fresh, migrated database of its own for one test file (a clone of the run's template). */
export async function createTestDatabase(): Promise<{ url: string; name: string }> {
  const adminUrl = requireEnv(ENV_ADMIN_URL);
  const name = `herald_t_${requireEnv(ENV_RUN_ID)}_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${requireEnv(ENV_TEMPLATE)}`);
  } finally {
    await admin.end();
  }
  return { url: withDatabase(adminUrl, name), name };
}

/** A short-lived pg client on a test database, for assertions on rows. */
export async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Undoes migrations, newest first, through the one named `name` (its class's `name`): the
 * database as the version before that migration left it, for tests of an upgrade.
 */
export async function undoMigrationsThrough(ds: DataSource, name: string): Promise<void> {
  for (;;) {
    const last = await ds.query<{ name: string }[]>(`SELECT name FROM migrations ORDER BY id DESC LIMIT 1`);
    if (last.length === 0) throw new Error(`${name} was not among the applied migrations`);
    await ds.undoLastMigration({ transaction: 'each' });
    if (last[0].name === name) return;
  }
}

/** The jobs' rows of `$1` (ids) with their attempt counts, as the engine fixtures read them (JobRow in ./engine.ts). */
export const JOB_ROWS_SQL = `SELECT j.id, j.status, j.attempt_count, j.lease_owner, (SELECT count(*)::int FROM attempts a WHERE a.job_id = j.id) AS attempts
  FROM jobs j WHERE j.id = ANY($1::uuid[]) ORDER BY j.created_at, j.id`;
