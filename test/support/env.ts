import * as os from 'node:os';
import * as path from 'node:path';
/** Names of the variables the global setup hands to every test worker. */
export const ENV_ADMIN_URL = 'HERALD_TEST_ADMIN_URL';
export const ENV_TEMPLATE = 'HERALD_TEST_TEMPLATE';
export const ENV_RUN_ID = 'HERALD_TEST_RUN_ID';

export function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests through jest (the global setup sets it)`);
  return value;
}

export function withDatabase(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** The file holding the OpenAPI document a run's files share (test/support/app.ts); global teardown removes it. */
export function runDocumentFile(runId: string): string {
  return path.join(os.tmpdir(), `herald-test-openapi-${runId}.json`);
}
