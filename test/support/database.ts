import { randomBytes } from 'node:crypto';
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
