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
