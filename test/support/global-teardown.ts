import * as fs from 'node:fs';
import { Client } from 'pg';
import { runDocumentFile } from './env';
import type { GlobalState } from './global-setup';

/** Drops this run's databases (template and clones) and stops the embedded server. */
export default async function globalTeardown(): Promise<void> {
  const state = (globalThis as { __heraldTest?: GlobalState }).__heraldTest;
  if (!state) return;
  const admin = new Client({ connectionString: state.adminUrl });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE $1 OR datname = $2`, [
      `herald_t_${state.runId}_%`,
      state.template,
    ]);
    for (const { datname } of rows) {
      await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    }
  } finally {
    await admin.end();
  }
  // The OpenAPI document the run's files shared (test/support/app.ts).
  fs.rmSync(runDocumentFile(state.runId), { force: true });
  if (state.embedded) await state.embedded.stop();
  if (state.embeddedDir) fs.rmSync(state.embeddedDir, { recursive: true, force: true });
}
