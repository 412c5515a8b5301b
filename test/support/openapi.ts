import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { Test } from 'supertest';

/**
 * Checks answers of the API against its own OpenAPI document (the one the app serves at
 * /docs-json), so the document cannot drift from the code. Every request a test makes through
 * `TestApp.http()` (test/support/app.ts) or `api()` (test/support/service.ts) goes through it:
 *
 * - a `/v1` request that matches no documented operation fails, unless the app itself answered
 *   "No route …" (a test of unknown routes);
 * - the answer's status must be listed for the operation (an error status too, a 500 never is);
 * - a JSON body must match the status's schema, read strictly: a field the document does not
 *   describe fails, as does a missing required one, a wrong type or a value outside an enum;
 * - the headers Herald sends for a reason (Idempotent-Replayed, Retry-After) must be documented
 *   on that answer, and match their schema.
 *
 * docs/api-contract.md tells a developer how to document a new route.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

interface OpenApiDocument {
  paths: Record<string, Record<string, JsonObject>>;
  components?: { schemas?: Record<string, JsonObject> };
}

/** Headers that carry meaning for a client: when sent, the answer must document them. */
const MEANINGFUL_HEADERS = ['idempotent-replayed', 'retry-after'];

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  params: number;
  responses: Record<string, JsonObject>;
}

export interface ObservedResponse {
  method: string;
  /** path with or without the query string */
  url: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** the parsed JSON body, or the text */
  body: unknown;
  /** false when the answer had no body at all */
  hasBody: boolean;
}

const SCHEMA_ID = (name: string) => `urn:herald:schema:${name}`;

/**
 * OpenAPI 3.0 schema → JSON Schema as Ajv reads it, closed: `nullable` becomes a `null`
 * alternative, component refs point at the schemas added under SCHEMA_ID, and an object that
 * lists its properties and says nothing of others admits no others.
 */
function toJsonSchema(node: Json): Json {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (node === null || typeof node !== 'object') return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'nullable' || key === 'example') continue;
    if (key === '$ref' && typeof value === 'string') {
      out.$ref = SCHEMA_ID(value.replace('#/components/schemas/', ''));
    } else if (key === 'properties' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJsonSchema(v)]));
    } else {
      out[key] = toJsonSchema(value);
    }
  }
  if (out.properties !== undefined && out.additionalProperties === undefined && out.allOf === undefined) {
    out.additionalProperties = false;
  }
  if (node.nullable === true) {
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    return { anyOf: [{ type: 'null' }, out] };
  }
  return out;
}

function newAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, strictTuples: false });
  addFormats(ajv);
  // OpenAPI formats that say how a value is meant, not what it must look like.
  for (const format of ['binary', 'byte', 'password']) ajv.addFormat(format, true);
  for (const format of ['int32', 'int64']) ajv.addFormat(format, { type: 'number', validate: (n: number) => Number.isInteger(n) });
  for (const format of ['float', 'double']) ajv.addFormat(format, { type: 'number', validate: () => true });
  ajv.addVocabulary(['xml', 'externalDocs', 'discriminator']);
  return ajv;
}

function templateToPattern(template: string): RegExp {
  const escaped = template
    .split(/(\{[^}]+\})/)
    .map((part) => (part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${escaped}/?$`);
}

const mediaTypeOf = (header: string | string[] | undefined) =>
  (Array.isArray(header) ? header[0] : header)?.split(';')[0]?.trim().toLowerCase() ?? '';

function mediaTypeMatches(documented: string, actual: string): boolean {
  if (documented === actual || documented === '*/*') return true;
  const [type, subtype] = documented.split('/');
  return subtype === '*' && actual.startsWith(`${type}/`);
}

export class OpenApiContract {
  private readonly ajv = newAjv();
  private readonly operations: Operation[] = [];
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(readonly document: OpenApiDocument) {
    for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) {
      this.ajv.addSchema({ ...(toJsonSchema(schema) as JsonObject), $id: SCHEMA_ID(name) });
    }
    for (const [template, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (!METHODS.includes(method)) continue;
        this.operations.push({
          method,
          template,
          pattern: templateToPattern(template),
          params: (template.match(/\{/g) ?? []).length,
          responses: (op.responses ?? {}) as Record<string, JsonObject>,
        });
      }
    }
    // Literal segments win over parameters: /v1/dlq/requeue before /v1/dlq/{jobId}.
    this.operations.sort((a, b) => a.params - b.params);
  }

  private validator(key: string, schema: Json): ValidateFunction {
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile(toJsonSchema(schema) as JsonObject);
      this.validators.set(key, validate);
    }
    return validate;
  }

  /** What is wrong with this answer, in words; null when the document describes it. */
  problem(r: ObservedResponse): string | null {
    const method = r.method.toLowerCase();
    const path = r.url.split('?')[0] ?? '';
    const onPath = this.operations.filter((o) => o.pattern.test(path));
    const op = onPath.find((o) => o.method === method);
    const who = `${r.method.toUpperCase()} ${path}`;
    if (!op) {
      const noRoute =
        r.status === 404 &&
        typeof (r.body as { message?: unknown })?.message === 'string' &&
        (r.body as { message: string }).message.startsWith('No route');
      if (noRoute || !/^\/v1(\/|$)/.test(path)) return null;
      return `${who} answered ${r.status}, but the OpenAPI document has no such operation: document the route (docs/api-contract.md)`;
    }
    const what = `${r.method.toUpperCase()} ${op.template}`;
    const statusKey = String(r.status);
    const response = op.responses[statusKey] ?? op.responses[`${statusKey[0]}XX`] ?? op.responses.default;
    if (!response) {
      return (
        `${what} answered ${r.status}, a status its OpenAPI responses do not list (${Object.keys(op.responses).join(', ')}): ` +
        `document it with @ApiResponse/@ApiErrors, or fix the code${r.hasBody ? `; body: ${JSON.stringify(r.body).slice(0, 300)}` : ''}`
      );
    }

    const headers = (response.headers ?? {}) as Record<string, JsonObject>;
    const documentedHeaders = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    for (const name of MEANINGFUL_HEADERS) {
      const value = r.headers[name];
      if (value === undefined) continue;
      const doc = documentedHeaders.get(name);
      if (!doc) return `${what} answered ${r.status} with a ${name} header that its OpenAPI response does not document`;
      if (doc.schema !== undefined) {
        const validate = this.validator(`${what} ${statusKey} header ${name}`, doc.schema);
        if (!validate(value))
          return `${what} answered ${r.status} with ${name}: ${String(value)}, which does not match its documented schema`;
      }
    }

    if (method === 'head' || r.status === 204 || r.status === 304) return null;
    const content = response.content as Record<string, JsonObject> | undefined;
    if (!r.hasBody) {
      return content ? `${what} answered ${r.status} without a body, but the document describes one` : null;
    }
    if (!content) return `${what} answered ${r.status} with a body, but its OpenAPI response describes none`;
    const actualType = mediaTypeOf(r.headers['content-type']);
    const entry = Object.entries(content).find(([type]) => mediaTypeMatches(type.toLowerCase(), actualType));
    if (!entry) return `${what} answered ${r.status} as ${actualType}, but the document lists ${Object.keys(content).join(', ')}`;
    const [type, media] = entry;
    if (media.schema === undefined || !/json/.test(type)) return null;
    const validate = this.validator(`${what} ${statusKey} ${type}`, media.schema);
    if (validate(r.body)) return null;
    const errors = (validate.errors ?? [])
      .slice(0, 8)
      .map(
        (e) =>
          `${e.instancePath || '(body)'} ${e.message ?? ''}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`,
      )
      .join('; ');
    return `${what} answered ${r.status} with a body that does not match its OpenAPI schema: ${errors}; body: ${JSON.stringify(r.body).slice(0, 500)}`;
  }

  /** Throws when problem() finds something. */
  check(r: ObservedResponse): void {
    const problem = this.problem(r);
    if (problem) throw new Error(`OpenAPI contract: ${problem}`);
  }
}

/** supertest response → what the contract reads. */
export function observed(
  method: string,
  url: string,
  res: { status: number; headers: Record<string, string>; body: unknown; text?: string },
): ObservedResponse {
  const isJson = /json/.test(mediaTypeOf(res.headers['content-type']));
  const text = res.text ?? '';
  return {
    method,
    url: url.replace(/^https?:\/\/[^/]+/, ''),
    status: res.status,
    headers: res.headers,
    body: isJson ? res.body : text,
    hasBody: text.length > 0 || (Buffer.isBuffer(res.body) && res.body.length > 0),
  };
}

/**
 * Makes a supertest request check its answer against the contract once the test's own
 * assertions have passed (so a failing `.expect(201)` still reports itself first).
 */
export function checkedTest(test: Test, method: string, contract: OpenApiContract): Test {
  const end = test.end.bind(test);
  test.end = (fn?: (err: Error | null, res: import('supertest').Response) => void) =>
    end((err: Error | null, res: import('supertest').Response) => {
      if (!err && res) {
        const problem = contract.problem(observed(method, test.url, res));
        if (problem) return fn?.(new Error(`OpenAPI contract: ${problem}`), res);
      }
      fn?.(err, res);
    });
  return test;
}
