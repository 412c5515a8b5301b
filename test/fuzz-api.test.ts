import fc from 'fast-check';
import { bootTestApp, TestApp } from './support/app';
import { makeImage } from './support/media';
import { pngBomb } from './support/png-bomb';
import {
  appRoutes,
  createFixtures,
  Fixtures,
  isErrorBody,
  requestFor,
  RequestSpec,
  Route,
  routeKey,
  ROUTE_SPECS,
  send,
  urlFor,
  withFingerprints,
} from './support/route-table';
import { bearer } from './support/config';
import { withClient } from './support/database';

/**
 * Property-based fuzz of every /v1 route (from the app's router): each run takes a request the
 * route accepts and breaks one thing in it — a body value (wrong type, huge, deeply nested,
 * unicode edge cases, `__proto__`/`constructor` keys, SQL fragments), the whole body, the query,
 * a path id or a header. Whatever comes in: never a 5xx, every 4xx in the error shape, and a
 * 4xx changes no row of any table.
 *
 * FUZZ_RUNS (runs per route, default 20) and FUZZ_SEED (default fixed, so a failure reproduces;
 * `random` for a new one each time) tune it; a failure prints the request that broke it.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 20);
const SEED = process.env.FUZZ_SEED === 'random' ? Date.now() : Number(process.env.FUZZ_SEED ?? 20261130);

// ---- hostile values ---------------------------------------------------------------------------

const SQL = ["'", "' OR '1'='1", "'; DROP TABLE jobs; --", '1; SELECT pg_sleep(10)', '$1', "\\'", '%', '_', "E'\\x00'", '/*', "'::uuid"];
const UNICODE = [
  '\u0000',
  'a\u0000b',
  '\uD800',
  '\uDFFF',
  'x\uDBFF',
  '\u202E',
  '\u200B\u200D',
  '\uFEFF',
  'e\u0301\u0301\u0301',
  '👨‍👩‍👧‍👦',
  '𝕳𝖊𝖗𝖆𝖑𝖉',
  '\u{10FFFF}',
  '\uFFFE',
  'ﷺ',
  '\r\n\r\n',
  '\t',
  'İ',
  'ß'.repeat(100),
  '\u0085',
  '\u2028',
];
const WEIRD = [
  '',
  ' ',
  '__proto__',
  'constructor',
  'prototype',
  'null',
  'undefined',
  'NaN',
  'Infinity',
  '-0',
  '1e309',
  '0x1F',
  '../../etc/passwd',
  '%00',
  '%2e%2e%2f',
  '${jndi:ldap://127.0.0.1/a}',
  '{{7*7}}',
  '<script>alert(1)</script>',
  '00000000-0000-0000-0000-000000000000',
  'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
  '{00000000-0000-0000-0000-000000000000}',
  '2026-02-30T25:61:61+99:99',
  '9999-12-31T23:59:59Z',
  '0000-01-01T00:00:00Z',
  'javascript:alert(1)',
  'http://[::1]:0/',
  'file:///etc/passwd',
];

const hostileString: fc.Arbitrary<string> = fc.oneof(
  // The known-nasty values most often: each is a bug class of its own.
  { weight: 5, arbitrary: fc.constantFrom(...SQL, ...UNICODE, ...WEIRD) },
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }), // lone surrogates and all
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.tuple(fc.constantFrom('x', '😀', 'é', '\u0000', "'"), fc.integer({ min: 300, max: 300_000 })).map(([c, n]) => c.repeat(n)),
);

const deep = (depth: number, kind: 'object' | 'array') => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = kind === 'object' ? { a: v } : [v];
  return v;
};

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.constantFrom(null, true, false, 0, -1, 1.5, -0, 2 ** 53 + 1, -(2 ** 63), 1e308, [], {}, [null], [[]], { '': '' }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.array(hostileString, { maxLength: 30 }),
  fc.tuple(fc.integer({ min: 10, max: 3_000 }), fc.constantFrom('object' as const, 'array' as const)).map(([d, k]) => deep(d, k)),
  fc.array(fc.constant('00000000-0000-4000-8000-000000000000'), { minLength: 21, maxLength: 2_000 }),
  fc.jsonValue({ maxDepth: 4 }),
);

/** Raw bodies sent as application/json: not JSON, or JSON no parser should choke on. */
const hostileRawJson: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    '{',
    '{"a":',
    '[',
    'nul',
    '"\\u0000"',
    '{"text":"\\u0000"}',
    '{"text":"\\ud800"}',
    '\uFEFF{}',
    '{}{}',
    '{"a":1,"a":2}',
    '1e999',
    '-',
    '[]',
    'null',
    '"x"',
    '{"__proto__":{"admin":true}}',
    '{"constructor":{"prototype":{"x":1}}}',
  ),
  fc.integer({ min: 1_000, max: 100_000 }).map((d) => '['.repeat(d) + ']'.repeat(d)),
  fc.integer({ min: 1_000, max: 50_000 }).map((d) => '{"a":'.repeat(d) + '1' + '}'.repeat(d)),
  fc.constant(`{"text":"${'x'.repeat(1024 * 1024)}"}`), // one byte past the 1 MB limit and more
  fc.string({ unit: 'binary', maxLength: 200 }),
);

/** Header values Node can send (latin-1, no control characters). */
const headerValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 300 }),
  fc.constantFrom('', ' ', "' OR 1=1 --", '__proto__', 'é'.repeat(10), 'x'.repeat(256), 'x'.repeat(8_000)),
);

// ---- mutations of a request that works ---------------------------------------------------------

type Mutation =
  | { kind: 'bodyValue'; path: number; value: unknown }
  | { kind: 'bodyKey'; path: number; key: string; value: unknown }
  | { kind: 'bodyWhole'; value: unknown }
  | { kind: 'rawJson'; text: string }
  | { kind: 'query'; key: string; values: string[] }
  | { kind: 'pathId'; value: string }
  | { kind: 'header'; name: string; value: string }
  | { kind: 'contentType'; value: string }
  | { kind: 'multipart'; field: string; value: string }
  | { kind: 'file'; bytes: Uint8Array | 'bomb'; filename: string; field: string };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('bodyValue' as const), path: fc.nat(), value: hostileValue }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('bodyKey' as const),
      path: fc.nat(),
      key: fc.oneof(
        fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'workspaceId', 'id', 'status', 'role'),
        hostileString,
      ),
      value: hostileValue,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('bodyWhole' as const), value: hostileValue }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('rawJson' as const), text: hostileRawJson }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('query' as const),
      key: fc.oneof(
        fc.constantFrom(
          'limit',
          'cursor',
          'status',
          'from',
          'to',
          'accountId',
          'provider',
          'q',
          'includeDiscarded',
          '__proto__',
          'constructor',
        ),
        hostileString,
      ),
      values: fc.array(hostileString, { minLength: 1, maxLength: 3 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('pathId' as const),
      // "raw:" values go into the URL as they are: escapes a decoder must refuse.
      value: fc.oneof(
        hostileString,
        fc.constantFrom('raw:%', 'raw:%E0%A4%A', 'raw:%ZZ', 'raw:%00', 'raw:%C0%AF', 'raw:..', 'raw:.', 'raw:%2F..%2F'),
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('header' as const),
      name: fc.constantFrom('Idempotency-Key', 'Authorization', 'Accept', 'X-Forwarded-For', 'Content-Length-Fake'),
      value: headerValue,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('contentType' as const),
      value: fc.constantFrom(
        'text/plain',
        'application/json; charset=utf-16',
        'application/json; charset=latin1',
        'application/x-www-form-urlencoded',
        'multipart/form-data',
        'application/xml',
        'image/png',
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('multipart' as const),
      field: fc.constantFrom('alt', 'file', '__proto__', 'extra'),
      value: hostileString,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('file' as const),
      bytes: fc.oneof(fc.uint8Array({ maxLength: 2_000 }), fc.constant('bomb' as const)),
      filename: fc.oneof(fc.constantFrom('a.png', '../../x.png', 'a\u0000.png', ''), fc.string({ maxLength: 30 })),
      field: fc.constantFrom('file', 'files', 'alt'),
    }),
  },
);

/** Paths to every value in a JSON value (root first), for picking what to break. */
function pathsOf(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  const out = [prefix];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...pathsOf(v, [...prefix, i])));
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) out.push(...pathsOf(v, [...prefix, k]));
  return out;
}

/** Sets an own property (even `__proto__`, as JSON.parse would) at `path`; the root is replaced. */
function setAt(root: unknown, path: (string | number)[], key: string | number | null, value: unknown): unknown {
  if (path.length === 0 && key === null) return value;
  let target = root as Record<string | number, unknown>;
  for (const p of path) target = target[p] as Record<string | number, unknown>;
  if (target === null || typeof target !== 'object') return value;
  const k = key ?? (path.length ? path[path.length - 1] : '');
  const holder =
    key === null
      ? path
          .slice(0, -1)
          .reduce<Record<string | number, unknown>>(
            (o, p) => o[p] as Record<string | number, unknown>,
            root as Record<string | number, unknown>,
          )
      : target;
  Object.defineProperty(holder, k, { value, enumerable: true, writable: true, configurable: true });
  return root;
}

interface Prepared {
  url: string;
  spec: RequestSpec;
  headers: Record<string, string>;
  raw?: { contentType: string; text: string };
  describe: string;
}

function prepare(route: Route, valid: RequestSpec, key: string, m: Mutation): Prepared {
  const headers: Record<string, string> = bearer(key);
  const spec: RequestSpec = JSON.parse(JSON.stringify({ ...valid, multipart: undefined })) as RequestSpec;
  if (valid.multipart) spec.multipart = { fields: { ...valid.multipart.fields }, file: valid.multipart.file };
  let rawParams: Record<string, string> = {};
  let raw: Prepared['raw'];
  let describe: string;
  switch (m.kind) {
    case 'bodyValue': {
      const paths = pathsOf(spec.body ?? {});
      const path = paths[m.path % paths.length];
      spec.body = setAt(spec.body ?? {}, path, null, m.value);
      describe = `body at ${JSON.stringify(path)} = ${preview(m.value)}`;
      break;
    }
    case 'bodyKey': {
      const objects = pathsOf(spec.body ?? {}).filter((p) => {
        const v = p.reduce<unknown>((o, k) => (o as Record<string | number, unknown>)[k], spec.body ?? {});
        return v !== null && typeof v === 'object' && !Array.isArray(v);
      });
      spec.body = spec.body ?? {};
      const path = objects.length ? objects[m.path % objects.length] : [];
      setAt(spec.body, path, m.key, m.value);
      describe = `body key ${JSON.stringify(m.key)} at ${JSON.stringify(path)} = ${preview(m.value)}`;
      break;
    }
    case 'bodyWhole':
      spec.body = m.value;
      spec.multipart = undefined;
      describe = `body = ${preview(m.value)}`;
      break;
    case 'rawJson':
      raw = { contentType: 'application/json', text: m.text };
      describe = `raw JSON ${preview(m.text)}`;
      break;
    case 'query': {
      const url = new URLSearchParams(spec.query ?? {});
      url.delete(m.key);
      for (const v of m.values) url.append(m.key, v);
      spec.query = undefined;
      const built = urlFor(route, spec, rawParams);
      describe = `query ${m.key}=${preview(m.values)}`;
      return { url: `${built}?${url.toString()}`, spec, headers, describe };
    }
    case 'pathId': {
      const names = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((x) => x[1]);
      if (names.length) rawParams = { [names[0]]: m.value.startsWith('raw:') ? m.value.slice(4) : percentEncode(m.value) || '%20' };
      describe = `path id ${preview(m.value)}`;
      break;
    }
    case 'header':
      headers[m.name] = m.name === 'Authorization' ? `Bearer ${key} ${m.value}` : m.value;
      describe = `header ${m.name}: ${preview(m.value)}`;
      break;
    case 'contentType':
      raw = { contentType: m.value, text: JSON.stringify(spec.body ?? {}) };
      describe = `Content-Type ${m.value}`;
      break;
    case 'multipart':
      if (spec.multipart) spec.multipart.fields[m.field] = m.value;
      else spec.body = { ...(spec.body as object), [m.field]: m.value };
      describe = `field ${m.field} = ${preview(m.value)}`;
      break;
    case 'file': {
      const bytes = m.bytes === 'bomb' ? pngBomb(20_000, 20_000) : Buffer.from(m.bytes);
      if (spec.multipart) spec.multipart.file = { field: m.field, bytes, filename: m.filename || 'x' };
      describe = `file ${m.field} ${m.bytes === 'bomb' ? 'bomb' : `${bytes.length} random bytes`} named ${preview(m.filename)}`;
      break;
    }
  }
  return { url: urlFor(route, spec, rawParams), spec, headers, raw, describe };
}

/** Every UTF-8 byte percent-encoded (a lone surrogate goes out as U+FFFD, as any client would send it). */
function percentEncode(value: string): string {
  return [...Buffer.from(value, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
}

function preview(v: unknown): string {
  let s: string;
  try {
    s = typeof v === 'string' ? JSON.stringify(v) : (JSON.stringify(v) ?? String(v));
  } catch {
    s = String(v);
  }
  return s.length > 120 ? `${s.slice(0, 120)}… (${s.length} chars)` : s;
}

// ---- the property ----------------------------------------------------------------------------

/** Fixtures of made-up ids: a route's working request built from them shows its shape, and nothing is created. */
const MADE_UP = '00000000-0000-4000-8000-000000000000';
const NO_FIXTURES: Fixtures = {
  workspaceId: MADE_UP,
  key: 'made-up-key',
  apiKeyId: MADE_UP,
  accountId: MADE_UP,
  mediaId: MADE_UP,
  postId: MADE_UP,
  jobId: MADE_UP,
  deadJobId: MADE_UP,
  deadPostId: MADE_UP,
  editorKey: 'made-up-editor-key',
  viewerKey: 'made-up-viewer-key',
  ownerPersonId: MADE_UP,
  personId: MADE_UP,
  invitationId: MADE_UP,
  shareLinkId: MADE_UP,
  eventSubscriptionId: MADE_UP,
  eventDeliveryId: MADE_UP,
};

describe('bad input on every /v1 route', () => {
  let t: TestApp;
  let routes: Route[];
  let png: Buffer;

  beforeAll(async () => {
    t = await bootTestApp({ config: { allowPrivateUrls: true } });
    routes = appRoutes(t);
    png = await makeImage('png');
  });
  afterAll(() => t.close());

  /** The fixtures the reading routes share (made by the first of them). */
  let readFixtures: Promise<Fixtures> | undefined;

  /** Runs the property on one route with fresh fixtures; the first failing request, or null. */
  async function fuzz(route: Route, n: number): Promise<string | null> {
    // Fresh things per route that writes, so a route that deletes does not starve another; the
    // routes that read (GET) share one set: a read leaves it as it was.
    const f =
      route.method === 'get'
        ? await (readFixtures ??= createFixtures(t, 'Fuzz reads'))
        : await createFixtures(t, `Fuzz ${routeKey(route)}`);
    const valid = requestFor(route, f, { png });
    return withFingerprints(t.databaseUrl, async (fingerprint) => {
      let before = await fingerprint();
      const run = await fc.check(
        fc.asyncProperty(mutation, async (m) => {
          const p = prepare(route, valid, f.key, m);
          let req = send(t, route, p.url, p.raw ? {} : p.spec, p.headers);
          if (p.raw) req = req.set('Content-Type', p.raw.contentType).send(p.raw.text);
          const res = await req;
          const where = `${routeKey(route)} with ${p.describe}: ${res.status} ${res.text.slice(0, 300)}`;
          if (res.status >= 500) throw new Error(`5xx: ${where}`);
          const after = await fingerprint();
          if (res.status >= 400) {
            if (!isErrorBody(res.body, res.status)) throw new Error(`not the error shape: ${where}`);
            const changed = Object.keys(after).filter((k) => after[k] !== before[k]);
            if (changed.length > 0) throw new Error(`a ${res.status} changed ${changed.join(', ')}: ${where}`);
          }
          before = after;
        }),
        // No shrinking: the first failing request is reported as sent (its preview is in the message).
        { numRuns: RUNS, seed: SEED + n, endOnFailure: true },
      );
      if (!run.failed) return null;
      const cause = run.errorInstance instanceof Error ? run.errorInstance.message : String(run.errorInstance);
      return `${cause} (seed ${run.seed}, path ${run.counterexamplePath})`;
    });
  }

  it("the database's fingerprint sees a write, even of the same values, and the sender's own columns of a mail do not count", async () => {
    const f = await createFixtures(t, 'Fingerprint');
    await withFingerprints(t.databaseUrl, async (fingerprint) => {
      const first = await fingerprint();
      expect(await fingerprint()).toEqual(first);
      await withClient(t.databaseUrl, (c) => c.query(`UPDATE workspaces SET name = name WHERE id = $1`, [f.workspaceId]));
      const rewritten = await fingerprint();
      expect(Object.keys(rewritten).filter((k) => rewritten[k] !== first[k])).toEqual(['workspaces']);
      await withClient(t.databaseUrl, (c) =>
        c.query(`UPDATE mail_outbox SET attempts = attempts + 1 WHERE workspace_id = $1`, [f.workspaceId]),
      );
      expect(await fingerprint()).toEqual(rewritten);
      await withClient(t.databaseUrl, (c) => c.query(`DELETE FROM post_comments WHERE false`));
      expect(await fingerprint()).toEqual(rewritten);
    });
  });

  /**
   * The deterministic companion of the fuzz: every value of every route's working body (nested
   * ones too) replaced in turn by null, [], {}, "", 0 and true. `@IsOptional()` lets null through
   * as if absent, and a service that tells absent from present with `=== undefined` then
   * meets a null: the fuzz found one such 500 (POST /v1/dlq/requeue with "ids": null).
   */
  it('answers every field of every body set to null, [], {}, "", 0 or true without a 5xx or a write on refusal', async () => {
    const problems: string[] = [];
    const isObject = (body: unknown) => body !== undefined && body !== null && typeof body === 'object';
    for (const route of routes) {
      // Only a route whose working request has a JSON body has fields to set: made-up ids tell
      // which routes those are, so no fixtures are made for the others.
      if (!isObject(requestFor(route, NO_FIXTURES, { png }).body)) continue;
      const f = await createFixtures(t, `Nulls ${routeKey(route)}`);
      const valid = requestFor(route, f, { png });
      if (!isObject(valid.body)) throw new Error(`${routeKey(route)}: the working body depends on the fixtures' ids`);
      await withFingerprints(t.databaseUrl, async (fingerprint) => {
        for (const path of pathsOf(valid.body).slice(1)) {
          for (const value of [null, [], {}, '', 0, true]) {
            const spec = { ...valid, body: setAt(JSON.parse(JSON.stringify(valid.body)), path, null, value) };
            const before = await fingerprint();
            const res = await send(t, route, urlFor(route, spec), spec, bearer(f.key));
            const where = `${routeKey(route)} with ${JSON.stringify(path)} = ${JSON.stringify(value)}: ${res.status} ${res.text.slice(0, 200)}`;
            if (res.status >= 500) problems.push(where);
            else if (res.status >= 400 && JSON.stringify(await fingerprint()) !== JSON.stringify(before))
              problems.push(`rows changed: ${where}`);
          }
        }
      });
    }
    expect(problems).toEqual([]);
  });

  const described = Object.keys(ROUTE_SPECS);
  it.each(described.map((key, n) => [key, n] as const))(
    '%s: never a 5xx, every 4xx in the error shape and without a write',
    async (key, n) => {
      const route = routes.find((r) => routeKey(r) === key);
      if (!route) throw new Error(`${key} is described in ROUTE_SPECS but the router has no such route`);
      expect(await fuzz(route, n)).toBeNull();
    },
  );

  it('fuzzes the routes the router has that ROUTE_SPECS does not describe yet', async () => {
    expect(routes.length).toBeGreaterThanOrEqual(30);
    const failures: string[] = [];
    for (const [n, route] of routes.filter((r) => !(routeKey(r) in ROUTE_SPECS)).entries()) {
      const failure = await fuzz(route, described.length + n);
      if (failure) failures.push(failure);
    }
    expect(failures).toEqual([]);
  });
});
