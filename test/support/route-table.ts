import type { Client } from 'pg';
import { TestApp } from './app';
import { withClient } from './database';
import { killJobs } from './dlq';
import { pollUntil } from './poll';
import { createPost, createWebhookAccount } from './engine';
import { makeImage, uploadImage } from './media';
import { createFirstPerson, invitePerson } from './people';
import { bearer } from './config';

/**
 * The API's routes as the running app's router has them (not a hand-kept list), and, for each,
 * a request that succeeds, so the bad-input fuzz (test/fuzz-api.test.ts) and the cross-tenant
 * suite (test/tenancy.test.ts) cover every route, including one added tomorrow: a route the
 * router has and ROUTE_SPECS lacks fails the "every route is described" tests by name, and is
 * still fuzzed and tenancy-checked generically meanwhile.
 */

export interface Route {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** Express pattern, e.g. `/v1/accounts/:id`. */
  path: string;
}

export const routeKey = (r: Route) => `${r.method.toUpperCase()} ${r.path}`;

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);

/** Every route of the app's Express router whose path starts with `prefix`. */
export function appRoutes(t: TestApp, prefix = '/v1/'): Route[] {
  const express = t.app.getHttpAdapter().getInstance() as {
    router?: { stack: Layer[] };
    _router?: { stack: Layer[] };
  };
  type Layer = { route?: { path: string; methods: Record<string, boolean> } };
  const stack = (express.router ?? express._router)?.stack ?? [];
  const routes: Route[] = [];
  for (const layer of stack) {
    if (!layer.route || !layer.route.path.startsWith(prefix)) continue;
    for (const [method, on] of Object.entries(layer.route.methods)) {
      if (on && METHODS.has(method)) routes.push({ method: method as Route['method'], path: layer.route.path });
    }
  }
  return routes;
}

/** One workspace's things, made through the API: what the routes' ids point at. */
export interface Fixtures {
  workspaceId: string;
  key: string;
  apiKeyId: string;
  accountId: string;
  mediaId: string;
  /** A post scheduled a day ahead, with the media; its one job waits. */
  postId: string;
  jobId: string;
  /** A job made dead (its post is another one). */
  deadJobId: string;
  deadPostId: string;
  /** Keys of the lower roles (`key` is the workspace's first key, an owner). */
  editorKey: string;
  viewerKey: string;
  /** The first person (an owner) and a second one (an editor, invited and accepted). */
  ownerPersonId: string;
  personId: string;
  /** An invitation still open. */
  invitationId: string;
  /** A client review link of `postId`, active. */
  shareLinkId: string;
  /** An event subscription (to post.scheduled), and one of its deliveries made dead. */
  eventSubscriptionId: string;
  eventDeliveryId: string;
}

export async function createFixtures(t: TestApp, name: string): Promise<Fixtures> {
  const ws = await t.http().post('/v1/workspaces').set(bearer(t.adminKey)).send({ name });
  if (ws.status !== 201) throw new Error(`workspace creation failed: ${ws.status} ${JSON.stringify(ws.body)}`);
  const key = ws.body.apiKey.key as string;
  const apiKey = await t.http().post('/v1/api-keys').set(bearer(key)).send({ name: 'second' });
  const account = await createWebhookAccount(t, key, 'http://127.0.0.1:9/hook');
  const subscription = await t
    .http()
    .post('/v1/event-subscriptions')
    .set(bearer(key))
    .send({ url: 'http://127.0.0.1:9/events', events: ['post.scheduled'] });
  if (subscription.status !== 201) throw new Error(`event subscription: ${subscription.status} ${JSON.stringify(subscription.body)}`);
  const mediaId = await uploadImage(t, key, await makeImage('png'));
  const later = new Date(Date.now() + 86_400_000).toISOString();
  const post = await createPost(t, key, {
    text: `${name} post`,
    media: [mediaId],
    scheduledAt: later,
    targets: [{ accountId: account.id }],
  });
  const dead = await createPost(t, key, { text: `${name} failed post`, targets: [{ accountId: account.id }] });
  await killJobs(t.databaseUrl, [dead.jobs[0].id]);
  // The post.scheduled of the posts above, to the subscription: one of them failed.
  const deliveries = await withClient(
    t.databaseUrl,
    async (c) =>
      (await c.query<{ id: string }>(`SELECT id FROM jobs WHERE account_id = $1 ORDER BY created_at, id`, [subscription.body.id])).rows,
  );
  await killJobs(t.databaseUrl, [deliveries[0].id]);
  const roleKey = async (role: 'editor' | 'viewer') => {
    const res = await t.http().post('/v1/api-keys').set(bearer(key)).send({ name: role, role });
    if (res.status !== 201) throw new Error(`${role} key: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.key as string;
  };
  // At most 40 characters of the name: an address's local part is at most 64 (a long route's name made it longer).
  const slug = `${name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 40)}-${ws.body.workspace.id.slice(0, 8)}`;
  const ownerPersonId = await createFirstPerson(t, key, `owner-${slug}@example.test`, `${name} owner`);
  const person = await invitePerson(t, key, `editor-${slug}@example.test`, 'editor', `${name} editor`);
  const invitation = await t
    .http()
    .post('/v1/invitations')
    .set(bearer(key))
    .send({ email: `pending-${slug}@example.test`, role: 'viewer' });
  if (invitation.status !== 201) throw new Error(`invitation: ${invitation.status} ${JSON.stringify(invitation.body)}`);
  const shareLink = await t.http().post(`/v1/posts/${post.id}/share-links`).set(bearer(key)).send({});
  if (shareLink.status !== 201) throw new Error(`share link: ${shareLink.status} ${JSON.stringify(shareLink.body)}`);
  // The invitation mails go out in the background (to .eml files here): wait until they have, so
  // a suite that fingerprints the database sees no write it did not cause.
  if (t.config.notifications.enabled) {
    await pollUntil(
      "the fixtures' invitation mails to be sent",
      () =>
        withClient(t.databaseUrl, async (c) =>
          Number(
            (
              await c.query(`SELECT count(*) AS n FROM mail_outbox WHERE workspace_id = $1 AND status IN ('pending', 'sending')`, [
                ws.body.workspace.id,
              ])
            ).rows[0].n,
          ),
        ),
      (n) => n === 0,
      30_000,
    );
  }
  return {
    workspaceId: ws.body.workspace.id,
    key,
    apiKeyId: apiKey.body.id,
    accountId: account.id,
    mediaId,
    postId: post.id,
    jobId: post.jobs[0].id,
    deadJobId: dead.jobs[0].id,
    deadPostId: dead.id,
    editorKey: await roleKey('editor'),
    viewerKey: await roleKey('viewer'),
    ownerPersonId,
    personId: person.id,
    invitationId: invitation.body.invitation.id,
    shareLinkId: shareLink.body.id,
    eventSubscriptionId: subscription.body.id,
    eventDeliveryId: deliveries[0].id,
  };
}

/** A request: path parameters by name, query, and a JSON body or multipart fields. */
export interface RequestSpec {
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  /** multipart/form-data instead of JSON: text fields and one file. */
  multipart?: { fields: Record<string, string>; file?: { field: string; bytes: Buffer; filename: string } };
}

export interface RouteSpec {
  /** A request of the workspace `f` that the route accepts (2xx). */
  valid(f: Fixtures, images: { png: Buffer }): RequestSpec;
  /** For routes with ids in their body: `own` path, `other`'s ids in the body (must be a 400 "unknown …"). */
  foreignBody?(own: Fixtures, other: Fixtures): RequestSpec;
  /** Only the bootstrap key may call it (403 for others). */
  adminOnly?: boolean;
  /**
   * The status a permitted caller gets for `valid` when it is not a 2xx, with the reason: the
   * role test (test/roles.test.ts) holds permitted calls to it.
   */
  permittedStatus?: { status: number; why: string };
}

/**
 * Every /v1 route: a request that works. Add your route here when you add it to the API; the
 * fuzz and the cross-tenant suite then cover it with real ids.
 */
export const ROUTE_SPECS: Record<string, RouteSpec> = {
  'POST /v1/workspaces': { valid: () => ({ body: { name: 'Fuzzed' } }), adminOnly: true },
  'POST /v1/api-keys': { valid: () => ({ body: { name: 'CI' } }) },
  'GET /v1/api-keys': { valid: () => ({ query: { limit: '10' } }) },
  'DELETE /v1/api-keys/:id': { valid: (f) => ({ params: { id: f.apiKeyId } }) },

  'GET /v1/people': { valid: () => ({ query: { limit: '10' } }) },
  'POST /v1/people': {
    valid: () => ({ body: { email: 'another-first@example.test', name: 'Another', password: 'a long enough password' } }),
    permittedStatus: { status: 409, why: 'the fixtures workspace has its first person already: later people join by invitation' },
  },
  'PATCH /v1/people/:id': { valid: (f) => ({ params: { id: f.personId }, body: { role: 'viewer', name: 'Renamed person' } }) },
  'DELETE /v1/people/:id': { valid: (f) => ({ params: { id: f.personId } }) },
  'POST /v1/people/:id/password-reset': { valid: (f) => ({ params: { id: f.personId } }) },
  'GET /v1/invitations': { valid: () => ({ query: { limit: '10' } }) },
  'POST /v1/invitations': { valid: () => ({ body: { email: 'newcomer@example.test', role: 'editor' } }) },
  'DELETE /v1/invitations/:id': { valid: (f) => ({ params: { id: f.invitationId } }) },
  'GET /v1/audit': { valid: (f) => ({ query: { limit: '10', kind: 'account', actorId: f.apiKeyId } }) },

  'POST /v1/accounts': { valid: () => ({ body: { provider: 'webhook', name: 'Hook', config: { url: 'http://127.0.0.1:9/other' } } }) },
  'GET /v1/accounts': { valid: () => ({ query: { limit: '10' } }) },
  'GET /v1/accounts/:id': { valid: (f) => ({ params: { id: f.accountId } }) },
  'PATCH /v1/accounts/:id': { valid: (f) => ({ params: { id: f.accountId }, body: { name: 'Renamed' } }) },
  'DELETE /v1/accounts/:id': { valid: (f) => ({ params: { id: f.accountId } }) },
  'POST /v1/accounts/:id/verify': { valid: (f) => ({ params: { id: f.accountId } }) },
  'POST /v1/accounts/:id/rotate-secret': { valid: (f) => ({ params: { id: f.accountId } }) },

  'POST /v1/posts': {
    valid: (f) => ({
      body: {
        text: 'Hello',
        media: [f.mediaId],
        targets: [{ accountId: f.accountId }],
        scheduledAt: new Date(Date.now() + 3_600_000).toISOString(),
      },
    }),
  },
  'POST /v1/posts/batch': {
    valid: (f) => ({
      body: {
        posts: [
          {
            text: 'Batched',
            media: [f.mediaId],
            targets: [{ accountId: f.accountId }],
            scheduledAt: new Date(Date.now() + 3_600_000).toISOString(),
          },
        ],
      },
    }),
  },
  'GET /v1/posts': { valid: () => ({ query: { limit: '10', status: 'scheduled' } }) },
  'GET /v1/posts/:id': { valid: (f) => ({ params: { id: f.postId } }) },
  'PATCH /v1/posts/:id': {
    valid: (f) => ({ params: { id: f.postId }, body: { text: 'Edited', media: [f.mediaId] } }),
    foreignBody: (own, other) => ({ params: { id: own.postId }, body: { media: [other.mediaId] } }),
  },
  'DELETE /v1/posts/:id': { valid: (f) => ({ params: { id: f.postId } }) },
  'GET /v1/posts/:id/comments': { valid: (f) => ({ params: { id: f.postId }, query: { limit: '10' } }) },
  'POST /v1/posts/:id/comments': { valid: (f) => ({ params: { id: f.postId }, body: { body: 'Looks good to me' } }) },
  'POST /v1/posts/:id/share-links': {
    valid: (f) => ({ params: { id: f.postId }, body: { expiresInDays: 3 } }),
    foreignBody: (own, other) => ({ params: { id: own.postId }, body: { postIds: [other.postId] } }),
  },
  'GET /v1/share-links': { valid: (f) => ({ query: { limit: '10', postId: f.postId } }) },
  'DELETE /v1/share-links/:id': { valid: (f) => ({ params: { id: f.shareLinkId } }) },
  // The fixtures' post is scheduled (not a draft, not waiting for approval): the role is let in, the table refuses the move.
  'POST /v1/posts/:id/submit': {
    valid: (f) => ({ params: { id: f.postId } }),
    permittedStatus: { status: 409, why: "the fixtures' post is scheduled, not a draft" },
  },
  'POST /v1/posts/:id/approve': {
    valid: (f) => ({ params: { id: f.postId } }),
    permittedStatus: { status: 409, why: "the fixtures' post is not waiting for approval" },
  },
  'POST /v1/posts/:id/reject': {
    valid: (f) => ({ params: { id: f.postId }, body: { comment: 'Not this one.' } }),
    permittedStatus: { status: 409, why: "the fixtures' post is not waiting for approval" },
  },
  'GET /v1/posts/:id/approvals': { valid: (f) => ({ params: { id: f.postId } }) },

  'GET /v1/jobs/:id': { valid: (f) => ({ params: { id: f.jobId } }) },
  'POST /v1/jobs/:id/retry': { valid: (f) => ({ params: { id: f.deadJobId } }) },

  'GET /v1/dlq': { valid: (f) => ({ query: { accountId: f.accountId, limit: '10' } }) },
  'POST /v1/dlq/requeue': { valid: (f) => ({ body: { ids: [f.deadJobId] } }) },
  'GET /v1/dlq/:jobId': { valid: (f) => ({ params: { jobId: f.deadJobId } }) },
  'PATCH /v1/dlq/:jobId': {
    valid: (f) => ({ params: { jobId: f.deadJobId }, body: { text: 'Fixed', media: [f.mediaId] } }),
    foreignBody: (own, other) => ({ params: { jobId: own.deadJobId }, body: { media: [other.mediaId] } }),
  },
  'POST /v1/dlq/:jobId/requeue': { valid: (f) => ({ params: { jobId: f.deadJobId }, body: {} }) },
  'DELETE /v1/dlq/:jobId': { valid: (f) => ({ params: { jobId: f.deadJobId } }) },

  'GET /v1/settings/notifications': { valid: () => ({}) },
  'PUT /v1/settings/notifications': {
    valid: () => ({
      body: {
        digest: { enabled: true, recipients: ['ops@example.test'], hour: 9, timezone: 'Europe/Paris', sendWhenEmpty: false },
        alerts: { enabled: true },
      },
    }),
  },
  'POST /v1/digest/preview': { valid: () => ({}) },
  'GET /v1/settings/approvals': { valid: () => ({}) },
  'PUT /v1/settings/approvals': { valid: () => ({ body: { mode: 'editors', clientApproval: false } }) },

  'GET /v1/settings/queue': { valid: () => ({}) },
  'PUT /v1/settings/queue': { valid: () => ({ body: { timezone: 'Europe/Berlin', slots: [{ day: 'mon', time: '09:00' }] } }) },
  'GET /v1/accounts/:id/queue': { valid: (f) => ({ params: { id: f.accountId } }) },
  'PUT /v1/accounts/:id/queue': {
    valid: (f) => ({ params: { id: f.accountId }, body: { timezone: 'America/New_York', slots: [{ day: 'tue', time: '12:30' }] } }),
  },
  'DELETE /v1/accounts/:id/queue': { valid: (f) => ({ params: { id: f.accountId } }) },
  'POST /v1/event-subscriptions': { valid: () => ({ body: { url: 'http://127.0.0.1:9/more-events', events: ['post.failed'] } }) },
  'GET /v1/event-subscriptions': { valid: () => ({}) },
  'GET /v1/event-subscriptions/:id': { valid: (f) => ({ params: { id: f.eventSubscriptionId } }) },
  'PATCH /v1/event-subscriptions/:id': { valid: (f) => ({ params: { id: f.eventSubscriptionId }, body: { description: 'Relay' } }) },
  'DELETE /v1/event-subscriptions/:id': { valid: (f) => ({ params: { id: f.eventSubscriptionId } }) },
  'POST /v1/event-subscriptions/:id/rotate-secret': { valid: (f) => ({ params: { id: f.eventSubscriptionId } }) },
  'GET /v1/event-subscriptions/:id/deliveries': { valid: (f) => ({ params: { id: f.eventSubscriptionId }, query: { limit: '10' } }) },
  'POST /v1/event-subscriptions/:id/deliveries/:deliveryId/retry': {
    valid: (f) => ({ params: { id: f.eventSubscriptionId, deliveryId: f.eventDeliveryId } }),
  },

  'POST /v1/media': {
    valid: (_f, images) => ({ multipart: { fields: { alt: 'an image' }, file: { field: 'file', bytes: images.png, filename: 'a.png' } } }),
  },
  'GET /v1/media': { valid: () => ({ query: { limit: '10' } }) },
  'GET /v1/media/usage': { valid: () => ({}) },
  'GET /v1/media/:id': { valid: (f) => ({ params: { id: f.mediaId } }) },
  'PATCH /v1/media/:id': { valid: (f) => ({ params: { id: f.mediaId }, body: { alt: 'described' } }) },
  'DELETE /v1/media/:id': {
    valid: (f) => ({ params: { id: f.mediaId } }),
    permittedStatus: { status: 409, why: "the fixtures' scheduled post still needs the image" },
  },
};

/**
 * For a route nobody described yet: its path parameters filled with the fixture the path
 * names (`/accounts/:id` → the account), no body.
 */
export function genericRequest(route: Route, f: Fixtures): RequestSpec {
  const byCollection: Record<string, string> = {
    'api-keys': f.apiKeyId,
    accounts: f.accountId,
    posts: f.postId,
    jobs: f.jobId,
    dlq: f.deadJobId,
    'failed-posts': f.deadJobId,
    media: f.mediaId,
    people: f.personId,
    invitations: f.invitationId,
    workspaces: f.workspaceId,
    'share-links': f.shareLinkId,
    'event-subscriptions': f.eventSubscriptionId,
    deliveries: f.eventDeliveryId,
  };
  const params: Record<string, string> = {};
  const segments = route.path.split('/');
  segments.forEach((s, i) => {
    if (s.startsWith(':')) params[s.slice(1)] = byCollection[segments[i - 1] ?? ''] ?? '00000000-0000-4000-8000-000000000000';
  });
  return { params };
}

export function requestFor(route: Route, f: Fixtures, images: { png: Buffer }): RequestSpec {
  const spec = ROUTE_SPECS[routeKey(route)];
  return spec ? spec.valid(f, images) : genericRequest(route, f);
}

/** The URL of a request: parameters substituted (encoded), query appended. */
export function urlFor(route: Route, spec: RequestSpec, rawParams: Record<string, string> = {}): string {
  let path = route.path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => {
    if (name in rawParams) return rawParams[name];
    return encodeURIComponent(spec.params?.[name] ?? '00000000-0000-4000-8000-000000000000');
  });
  const query = new URLSearchParams(spec.query ?? {}).toString();
  if (query) path += `?${query}`;
  return path;
}

/** Sends a request with supertest; `headers` are added as given. */
export function send(t: TestApp, route: Route, url: string, spec: RequestSpec, headers: Record<string, string>) {
  let req = t.http()[route.method](url);
  for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
  if (spec.multipart) {
    for (const [k, v] of Object.entries(spec.multipart.fields)) req = req.field(k, v);
    const file = spec.multipart.file;
    if (file) req = req.attach(file.field, file.bytes, file.filename);
    return req;
  }
  // A primitive body (a number, a string, null) goes out as JSON text, as a client would send it.
  if (spec.body !== undefined && (typeof spec.body !== 'object' || spec.body === null)) {
    return req.set('Content-Type', 'application/json').send(JSON.stringify(spec.body) ?? 'null');
  }
  if (spec.body !== undefined) return req.send(spec.body);
  return req;
}

/**
 * What a refused request may change without having written anything, by table: whole tables
 * (`'*'`) or some columns. The migrations table never changes; login_throttle counts a
 * refused key (the wrong-key slow-down), which is what a 401 is for; the mail sender delivers a
 * mail an earlier (valid) request queued after that request answered, so its own columns move
 * on their own, the body of a mail with a one-use link too (dropped once sent: see
 * src/mail/mail-seal.ts). A new mail, or any change to its kind, subject or recipients, still shows.
 */
const NOT_THE_REQUESTS: Record<string, '*' | string[]> = {
  migrations: '*',
  login_throttle: '*',
  mail_outbox: [
    'status',
    'attempts',
    'next_attempt_at',
    'lease_until',
    'last_error',
    'response',
    'rejected',
    'sent_at',
    'updated_at',
    'html',
    'text',
  ],
};

/**
 * A fingerprint of every row of every table, to prove that a refused request wrote nothing
 * anywhere, leaving out NOT_THE_REQUESTS. Per table: the count of rows and the sum of a 64-bit
 * hash of each row's version (`xmin`, the transaction that wrote it, and `ctid`, where it lies),
 * which any insert, update or delete changes, even one that writes the same values again; a table
 * with columns left out is hashed on its other columns' text instead. A sum needs no order, and a
 * version costs little to read: md5 over the sorted rows' text took ~26 ms a print late in the
 * fuzz file (half of its time), this takes a few. A write changes the sum unless two 64-bit hashes
 * collide; sums are numeric, so they never wrap.
 */
export async function databaseFingerprint(client: Client): Promise<Record<string, string>> {
  let text = fingerprintStatements.get(client);
  if (!text) {
    const tables = (
      await client.query<{ name: string }>(
        `SELECT quote_ident(tablename) AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`,
      )
    ).rows
      .map((r) => r.name)
      .filter((name) => NOT_THE_REQUESTS[name] !== '*');
    const parts = tables.map((name) => {
      const left = NOT_THE_REQUESTS[name];
      // A row's version (the transaction that wrote it and where it lies) changes with any write to
      // it, and costs far less to read than its text; a table with columns left out is read as text.
      const row = Array.isArray(left)
        ? `(to_jsonb(t) - ARRAY[${left.map((c) => `'${c}'`).join(', ')}])::text`
        : `t.xmin::text || t.ctid::text`;
      return `SELECT '${name}' AS name, count(*) || ':' || coalesce(sum(hashtextextended(${row}, 0)), 0) AS print FROM ${name} t`;
    });
    fingerprintStatements.set(client, (text = parts.join(' UNION ALL ')));
  }
  // Prepared on the connection: planning the union of every table was most of a print's time.
  const rows = (await client.query<{ name: string; print: string }>({ name: 'herald-test-fingerprint', text })).rows;
  return Object.fromEntries(rows.map((r) => [r.name, r.print]));
}

/** The fingerprint's statement per connection (the tables are the schema's: they do not change while a test runs). */
const fingerprintStatements = new WeakMap<Client, string>();

export async function withFingerprints<T>(url: string, work: (print: () => Promise<Record<string, string>>) => Promise<T>): Promise<T> {
  return withClient(url, (client) => work(() => databaseFingerprint(client)));
}

/** The JSON error shape every 4xx answers with (docs/api.md "Errors"). */
export function isErrorBody(body: unknown, status: number): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const b = body as Record<string, unknown>;
  return b.statusCode === status && typeof b.error === 'string' && typeof b.message === 'string' && b.message.length > 0;
}
