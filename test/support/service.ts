import { OpenApiContract } from './openapi';
import { freePort } from './net';
import { ServiceProcess } from './process';
import { Receiver, ReceiverHandler, startReceiver } from './receiver';
import { bearer } from './config';

const contracts = new Map<string, Promise<OpenApiContract>>();

/** The OpenAPI document a running service serves, read once per service. */
function contractOf(service: ServiceProcess): Promise<OpenApiContract> {
  let contract = contracts.get(service.url);
  if (!contract) {
    contract = fetch(`${service.url}/docs-json`).then(
      async (res) => new OpenApiContract((await res.json()) as ConstructorParameters<typeof OpenApiContract>[0]),
    );
    contracts.set(service.url, contract);
  }
  return contract;
}

/** A JSON call to a running service process; the answer is checked against its OpenAPI document. */
export async function api<T = unknown>(
  service: ServiceProcess,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const res = await fetch(`${service.url}${path}`, {
    method,
    headers: { ...bearer(key), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const parsed: unknown = text ? JSON.parse(text) : null;
  try {
    (await contractOf(service)).check({
      method,
      url: path,
      status: res.status,
      headers: Object.fromEntries(res.headers.entries()),
      body: parsed,
      hasBody: text.length > 0,
    });
  } catch (err) {
    // A 5xx is the service's own failure: its log says why, and a chaos run is not repeated at will.
    if (res.status >= 500 && err instanceof Error) err.message += `\nthe service's log, last lines:\n${service.text().slice(-4000)}`;
    throw err;
  }
  return { status: res.status, body: parsed as T };
}

/** The bootstrap API key of the service processes `useServices` starts. */
export const SERVICE_KEY = 'service-process-test-key-00000001';

/**
 * Settings for a service process in a test: its database, the bootstrap and credentials keys,
 * loopback receivers allowed, and polling, leases and retries fast enough to wait on.
 */
export function serviceEnv(databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    HERALD_API_KEY: SERVICE_KEY,
    HERALD_SECRET_KEY: 'ab'.repeat(32),
    HERALD_ALLOW_PRIVATE_URLS: 'true',
    LOG_LEVEL: 'warn',
    WORKER_POLL_INTERVAL_MS: '100',
    // An idle worker's safety sweep as often as the poll: tests that write jobs without a NOTIFY
    // (straight into the database) do not wait a minute. Tests of the idle design set their own.
    WORKER_SWEEP_INTERVAL_MS: '100',
    WORKER_LEASE_MS: '8000',
    HTTP_TOTAL_TIMEOUT_MS: '3000',
    RETRY_BASE_DELAY_MS: '50',
    RETRY_MAX_DELAY_MS: '500',
    ...extra,
  };
}

export interface ServicesFixture {
  /** A service process on `databaseUrl` (`serviceEnv` + `extra`), ready; killed after the test. */
  start(databaseUrl: string, extra?: Record<string, string>): Promise<ServiceProcess>;
  /** A loopback receiver, closed after the test. */
  receiver(handler?: ReceiverHandler): Promise<Receiver>;
  /** `n` webhook accounts through `service`'s API, all pointing at `url`. */
  accounts(service: ServiceProcess, url: string, n: number, extra?: Record<string, unknown>): Promise<string[]>;
}

/**
 * The tests that run the real service (`node dist/src/main.js`) as child processes: processes
 * and receivers made by a test are stopped after it (SIGKILL: a test that wants a clean stop
 * does it itself), whatever the test's outcome.
 */
export function useServices(): ServicesFixture {
  const services: ServiceProcess[] = [];
  const receivers: Receiver[] = [];
  afterEach(async () => {
    await Promise.all(services.splice(0).map((s) => s.stop('SIGKILL')));
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });
  return {
    async start(databaseUrl, extra = {}) {
      const s = ServiceProcess.start(serviceEnv(databaseUrl, extra), await freePort());
      services.push(s);
      await s.waitReady(120_000); // a start has taken over a minute at a load average of 30
      return s;
    },
    async receiver(handler) {
      const r = await startReceiver(handler);
      receivers.push(r);
      return r;
    },
    async accounts(service, url, n, extra = {}) {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const res = await api<{ id: string }>(service, SERVICE_KEY, 'POST', '/v1/accounts', {
          provider: 'webhook',
          name: `blog ${i}`,
          config: { url },
          ...extra,
        });
        if (res.status !== 201) throw new Error(`account creation failed: ${res.status} ${JSON.stringify(res.body)}`);
        ids.push(res.body.id);
      }
      return ids;
    },
  };
}
