import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { bootTestApp, TestApp } from './support/app';
import { OpenApiContract } from './support/openapi';
import { ROOT } from './support/process';
import { bearer } from './support/config';

/**
 * The OpenAPI document served at /docs-json is the public contract most clients are generated
 * from. These tests hold it to a linter, to the conventions every operation follows, and prove
 * that the answer checks in the test support (test/support/openapi.ts) catch drift.
 */

type Operation = {
  operationId?: string;
  summary?: string;
  tags?: string[];
  security?: Array<Record<string, string[]>>;
  parameters?: Array<{ name: string; in: string; required?: boolean }>;
  responses: Record<string, { content?: Record<string, { schema?: unknown }>; headers?: Record<string, unknown> }>;
};
type Doc = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, { required?: string[]; properties?: Record<string, unknown> }>;
    securitySchemes: Record<string, Record<string, string>>;
  };
};

let t: TestApp;
let doc: Doc;

beforeAll(async () => {
  t = await bootTestApp({ config: { allowPrivateUrls: true } });
  // This app's own document (t.contract's is the run's shared copy: test/support/app.ts).
  doc = (await t.http().get('/docs-json').expect(200)).body as Doc;
  // ...which is the document every other file's answers are checked against (only `servers`, from PUBLIC_URL, may differ).
  expect({ paths: doc.paths, components: doc.components }).toEqual({
    paths: t.contract.document.paths,
    components: t.contract.document.components,
  });
});
afterAll(() => t.close());

function operations(): Array<{ method: string; path: string; op: Operation }> {
  return Object.entries(doc.paths).flatMap(([p, item]) => Object.entries(item).map(([method, op]) => ({ method, path: p, op })));
}

describe('the OpenAPI document', () => {
  it('passes redocly lint (recommended rules, redocly.yaml) with no error and no warning', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-openapi-'));
    try {
      const file = path.join(dir, 'openapi.json');
      fs.writeFileSync(file, JSON.stringify(doc));
      const { stdout } = await promisify(execFile)(
        path.join(ROOT, 'node_modules/.bin/redocly'),
        ['lint', file, '--config', path.join(ROOT, 'redocly.yaml'), '--format=json'],
        { env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } },
      ).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
      const report = JSON.parse(stdout) as {
        totals: { errors: number; warnings: number };
        problems: Array<{ ruleId: string; message: string; location: Array<{ pointer: string }> }>;
      };
      const problems = report.problems.map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);
      expect(problems).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('gives every operation an operationId, a summary and a tag', () => {
    const incomplete = operations()
      .filter(({ op }) => !op.operationId || !op.summary || !op.tags?.length)
      .map(({ method, path: p }) => `${method.toUpperCase()} ${p}`);
    expect(incomplete).toEqual([]);
    const ids = operations().map(({ op }) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('documents a body for every success of every operation (an undocumented route has none and fails here)', () => {
    const bare = operations().flatMap(({ method, path: p, op }) =>
      Object.entries(op.responses)
        .filter(([status, r]) => /^2/.test(status) && status !== '204' && !Object.values(r.content ?? {}).some((c) => c.schema))
        .map(([status]) => `${method.toUpperCase()} ${p} ${status}`),
    );
    expect(bare).toEqual([]);
    // And every operation has a success.
    expect(
      operations()
        .filter(({ op }) => !Object.keys(op.responses).some((s) => /^2/.test(s)))
        .map(({ path: p }) => p),
    ).toEqual([]);
  });

  it('documents errors in the one error shape: every /v1 operation lists 401 (and what any request can meet: 400, 413, 415, 431), and every error status has { statusCode, error, message }', () => {
    const v1 = operations().filter(({ path: p }) => p.startsWith('/v1/'));
    expect(v1.length).toBeGreaterThanOrEqual(27);
    for (const status of ['400', '401', '413', '415', '431']) {
      expect(v1.filter(({ op }) => !op.responses[status]).map(({ method, path: p }) => `${status} ${method} ${p}`)).toEqual([]);
    }
    const errorRef = { $ref: '#/components/schemas/Error' };
    for (const { op } of v1) {
      for (const [status, r] of Object.entries(op.responses)) {
        if (/^[45]/.test(status)) expect(r.content?.['application/json']?.schema).toEqual(errorRef);
      }
    }
    expect(doc.components.schemas.Error?.required?.sort()).toEqual(['error', 'message', 'statusCode']);
    // The statuses a client must handle, as the product contract lists them, all appear.
    const statuses = new Set(v1.flatMap(({ op }) => Object.keys(op.responses)));
    for (const s of ['400', '401', '403', '404', '409', '413', '415', '422']) expect(statuses).toContain(s);
  });

  it('describes the bearer scheme as a Herald API key on every /v1 operation, and no key elsewhere', () => {
    const scheme = doc.components.securitySchemes['api-key'];
    expect(scheme).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'Herald API key' });
    expect(JSON.stringify(scheme)).not.toMatch(/JWT"/);
    for (const { path: p, op } of operations()) {
      expect({ path: p, security: op.security }).toEqual({ path: p, security: p.startsWith('/v1/') ? [{ 'api-key': [] }] : [{}] });
    }
  });

  it('lists Idempotency-Key once on POST /v1/posts, optional, and Idempotent-Replayed on its 201', () => {
    const create = doc.paths['/v1/posts']?.post;
    const headers = (create?.parameters ?? []).filter((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key');
    expect(headers).toHaveLength(1);
    expect(headers[0]?.required).toBe(false);
    expect(Object.keys(create?.responses['201']?.headers ?? {})).toEqual(['Idempotent-Replayed']);
    expect(Object.keys(create?.responses ?? {}).sort()).toEqual(['201', '400', '401', '403', '409', '413', '415', '422', '429', '431']);
  });

  it('names the fixed shapes with the fields the product contract fixes', () => {
    const fields = (name: string) => doc.components.schemas[name]?.required ?? [];
    expect(fields('Account')).toEqual(
      expect.arrayContaining(['id', 'provider', 'name', 'status', 'config', 'circuit', 'lastError', 'lastSuccessAt', 'createdAt']),
    );
    expect(fields('Circuit')).toEqual(expect.arrayContaining(['state', 'openUntil', 'consecutiveFailures']));
    expect(fields('Job')).toEqual(
      expect.arrayContaining([
        'id',
        'postId',
        'accountId',
        'provider',
        'status',
        'attemptCount',
        'nextAttemptAt',
        'idempotencyKey',
        'errorClass',
        'lastError',
        'deadReason',
        'remoteId',
        'remoteUrl',
      ]),
    );
    expect(fields('Attempt')).toEqual(
      expect.arrayContaining([
        'number',
        'startedAt',
        'finishedAt',
        'httpStatus',
        'networkError',
        'errorClass',
        'decision',
        'retryAt',
        'latencyMs',
        'responseExcerpt',
      ]),
    );
    expect(fields('Post')).toEqual(
      expect.arrayContaining(['id', 'status', 'text', 'title', 'link', 'media', 'scheduledAt', 'publishBy', 'metadata', 'jobs']),
    );
    expect(fields('JobWithAttempts')).toContain('attempts');
    for (const page of ['AccountPage', 'PostPage', 'DlqEntryPage', 'ApiKeyPage'])
      expect(fields(page).sort()).toEqual(['data', 'nextCursor']);
    for (const shape of ['DlqEntry', 'DlqDetail', 'Media', 'ApiKey', 'NewApiKey', 'Error'])
      expect(doc.components.schemas[shape]).toBeDefined();
  });
});

describe('the answer checks of the test support', () => {
  const base = { headers: { 'content-type': 'application/json; charset=utf-8' }, hasBody: true };

  async function realAccount(): Promise<Record<string, unknown>> {
    const res = await t.http().get('/v1/accounts').set(bearer(t.adminKey)).expect(200);
    if ((res.body as { data: unknown[] }).data.length === 0) {
      await t
        .http()
        .post('/v1/accounts')
        .set(bearer(t.adminKey))
        .send({ provider: 'webhook', name: 'Checks', config: { url: 'http://127.0.0.1:9/hook' } })
        .expect(201);
    }
    const page = await t.http().get('/v1/accounts').set(bearer(t.adminKey)).expect(200);
    return (page.body as { data: Array<Record<string, unknown>> }).data[0] ?? {};
  }

  it('accept a real answer as the app gives it', async () => {
    const account = await realAccount();
    expect(
      t.contract.problem({ ...base, method: 'GET', url: `/v1/accounts/${String(account.id)}`, status: 200, body: account }),
    ).toBeNull();
  });

  it('refuse a field the document does not describe, a missing required field and a value outside an enum', async () => {
    const account = await realAccount();
    const url = `/v1/accounts/${String(account.id)}`;
    expect(t.contract.problem({ ...base, method: 'GET', url, status: 200, body: { ...account, apiToken: 'x' } })).toMatch(
      /must NOT have additional properties \(apiToken\)/,
    );
    const { circuit: _circuit, ...withoutCircuit } = account;
    expect(t.contract.problem({ ...base, method: 'GET', url, status: 200, body: withoutCircuit })).toMatch(
      /must have required property 'circuit'/,
    );
    expect(t.contract.problem({ ...base, method: 'GET', url, status: 200, body: { ...account, status: 'sleeping' } })).toMatch(
      /\/status must be equal to one of the allowed values/,
    );
    expect(t.contract.problem({ ...base, method: 'GET', url, status: 200, body: { ...account, lastError: 7 } })).toMatch(
      /\/lastError must be (string|null)/,
    );
  });

  it('refuse a status the operation does not list, and an error body not in the error shape', () => {
    const url = '/v1/accounts/6f1c2a3e-8b7d-4c5e-9f01-23456789abcd';
    const error = { statusCode: 409, error: 'Conflict', message: 'no' };
    expect(t.contract.problem({ ...base, method: 'GET', url, status: 409, body: error })).toMatch(
      /answered 409, a status its OpenAPI responses do not list/,
    );
    expect(t.contract.problem({ ...base, method: 'GET', url, status: 404, body: { ...error, statusCode: 404 } })).toBeNull();
    expect(t.contract.problem({ ...base, method: 'GET', url, status: 404, body: { message: 'not found' } })).toMatch(
      /required property 'statusCode'/,
    );
    expect(t.contract.problem({ ...base, method: 'GET', url, status: 500, body: { ...error, statusCode: 500 } })).toMatch(/answered 500/);
  });

  it('refuse an undocumented /v1 operation, but not a request to a route that does not exist', () => {
    const body = { statusCode: 200, error: 'OK', message: 'hi' };
    expect(t.contract.problem({ ...base, method: 'GET', url: '/v1/reports', status: 200, body })).toMatch(
      /GET \/v1\/reports answered 200, but the OpenAPI document has no such operation/,
    );
    expect(t.contract.problem({ ...base, method: 'PUT', url: '/v1/posts', status: 200, body })).toMatch(/no such operation/);
    const noRoute = { statusCode: 404, error: 'Not Found', message: 'No route GET /v1/reports' };
    expect(t.contract.problem({ ...base, method: 'GET', url: '/v1/reports', status: 404, body: noRoute })).toBeNull();
  });

  it('refuse a documented route whose success has no documented body (what Nest gives a route without decorators)', () => {
    const bare = new OpenApiContract({
      paths: { '/v1/reports': { get: { responses: { '200': { description: '' } } } } },
      components: { schemas: {} },
    });
    expect(bare.problem({ ...base, method: 'GET', url: '/v1/reports?x=1', status: 200, body: { data: [] } })).toMatch(
      /with a body, but its OpenAPI response describes none/,
    );
  });

  it('refuse a meaningful header the answer does not document', () => {
    const url = '/v1/accounts';
    const page = { data: [], nextCursor: null };
    expect(
      t.contract.problem({ ...base, method: 'GET', url, status: 200, body: page, headers: { ...base.headers, 'retry-after': '5' } }),
    ).toMatch(/retry-after header that its OpenAPI response does not document/);
    expect(
      t.contract.problem({
        ...base,
        method: 'GET',
        url,
        status: 200,
        body: page,
        headers: { ...base.headers, 'idempotent-replayed': 'true' },
      }),
    ).toMatch(/idempotent-replayed/);
  });
});
