import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions, runMigrations } from '../../src/database/data-source';
import { startEmbeddedPostgres, EmbeddedPostgresHandle } from '../../src/database/embedded-postgres';
import { ensureChromium, ENV_CHROMIUM } from './chromium';
import { ENV_ADMIN_URL, ENV_RUN_ID, ENV_TEMPLATE, withDatabase } from './env';
import { freePort } from './net';

/**
 * Once per `jest` run:
 * 1. a PostgreSQL server: DATABASE_URL when set, else the embedded one (a fresh cluster in
 *    a temporary folder, on a free port), exactly as `npm start` would start it;
 * 2. a template database migrated with the real migrations; each integration test file
 *    clones it (CREATE DATABASE … TEMPLATE …, ~50 ms) so files run in parallel in isolation;
 * 3. the compiled service (dist/) for the tests that start Herald as a child process;
 * 4. a Chromium for the settings page's browser tests (./chromium.ts: Debian's, installed through
 *    apt-get when missing and run as root; else the run stops with the one command to run first).
 */
export interface GlobalState {
  embedded: EmbeddedPostgresHandle | null;
  embeddedDir: string | null;
  adminUrl: string;
  template: string;
  runId: string;
}

export default async function globalSetup(): Promise<void> {
  await setUp({ browser: true });
}

/** The setup itself; the fault suite (test/chaos/support/global-setup.ts) runs it without a browser. */
export async function setUp(options: { browser: boolean }): Promise<void> {
  // First, before a database or a build: a missing browser the tests cannot install stops the
  // run at once with the command to run, instead of after minutes of other tests.
  if (options.browser) process.env[ENV_CHROMIUM] = ensureChromium((line) => process.stderr.write(`\n${line}\n`));
  const runId = randomBytes(4).toString('hex');
  let embedded: EmbeddedPostgresHandle | null = null;
  let embeddedDir: string | null = null;
  let adminUrl: string;
  if (process.env.DATABASE_URL) {
    adminUrl = process.env.DATABASE_URL;
  } else {
    embeddedDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-test-pg-'));
    fs.chmodSync(embeddedDir, 0o755);
    embedded = await startEmbeddedPostgres({
      dataDir: path.join(embeddedDir, 'data'),
      port: await freePort(),
      persistent: false,
      log: () => undefined,
    });
    adminUrl = embedded.url;
  }

  const template = `herald_tpl_${runId}`;
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${template}`);
  } finally {
    await admin.end();
  }
  const ds = await new DataSource(dataSourceOptions(withDatabase(adminUrl, template), 2)).initialize();
  try {
    await runMigrations(ds);
  } finally {
    await ds.destroy();
  }

  if (!process.env.HERALD_TEST_SKIP_BUILD) {
    execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
      cwd: path.resolve(__dirname, '../..'),
      stdio: 'inherit',
    });
  }

  process.env[ENV_ADMIN_URL] = adminUrl;
  process.env[ENV_TEMPLATE] = template;
  process.env[ENV_RUN_ID] = runId;
  const state: GlobalState = { embedded, embeddedDir, adminUrl, template, runId };
  (globalThis as { __heraldTest?: GlobalState }).__heraldTest = state;
}
