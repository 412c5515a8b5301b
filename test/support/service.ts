import { bearer } from './app';
import { OpenApiContract } from './openapi';
import { ServiceProcess } from './process';

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
  (await contractOf(service)).check({
    method,
    url: path,
    status: res.status,
    headers: Object.fromEntries(res.headers.entries()),
    body: parsed,
    hasBody: text.length > 0,
  });
  return { status: res.status, body: parsed as T };
}

export async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}
