import * as http from 'node:http';
import type * as net from 'node:net';
import type { HeraldConfig } from '../../src/config/config';
import { bootTestApp, TestApp } from './app';
import { JOB_ROWS_SQL, withClient } from './database';
import { DEADLINE_MS, pollUntil } from './poll';
import { Receiver, ReceiverHandler, startReceiver } from './receiver';
import { bearer, fastEngine } from './config';

/**
 * The publish engine's test fixture: the real Nest application with its worker on a fresh
 * database of its own, loopback receivers, factories for accounts and posts made through the
 * API, and typed reads of what a user sees (jobs, accounts, posts). One fixture instead of the
 * setup each engine test file used to copy (Immich's medium tests and graphile-worker's
 * __tests__/helpers.ts work the same way).
 *
 *   describe('…', () => {
 *     const engine = useEngine({ circuit: NO_BREAKER });
 *     it('…', async () => {
 *       const r = await engine.receiver();             // closed after the test
 *       const account = await engine.account(r.urlFor('/hook'));
 *       const [jobId] = await engine.postMany(account.id, 1);
 *       await engine.waitForJob(jobId, (j) => j.status === 'succeeded');
 *     });
 *   });
 *
 * Waits go through the one poll helper (./poll.ts): they wait for the state they check.
 */

/** The app with its worker, on a fresh database (or `databaseUrl`'s). */
export async function bootEngine(overrides: Partial<HeraldConfig> = {}, databaseUrl?: string): Promise<TestApp> {
  return bootTestApp({ databaseUrl, config: fastEngine(overrides) });
}

// ---------------------------------------------------------------------------------------------
// What the API shows (docs/api.md)

export interface AttemptView {
  number: number;
  startedAt: string;
  finishedAt: string;
  httpStatus: number | null;
  networkError: string | null;
  errorClass: string;
  decision: string;
  retryAt: string | null;
  latencyMs: number;
  responseExcerpt: string | null;
  message: string | null;
  idempotencyKey?: string;
}

export interface JobView {
  id: string;
  postId: string;
  accountId: string;
  status: string;
  attemptCount: number;
  nextAttemptAt: string | null;
  idempotencyKey: string;
  errorClass: string | null;
  lastError: string | null;
  deadReason: string | null;
  remoteId: string | null;
  remoteUrl: string | null;
  finishedAt: string | null;
  attempts: AttemptView[];
}

export interface AccountView {
  id: string;
  status: string;
  statusReason: string | null;
  config: Record<string, unknown>;
  circuit: { state: string; openUntil: string | null; consecutiveFailures: number };
  lastError: string | null;
  lastSuccessAt: string | null;
}

export interface PostView {
  id: string;
  status: string;
  jobs: JobView[];
}

export async function getJob(t: TestApp, key: string, id: string): Promise<JobView> {
  const res = await t.http().get(`/v1/jobs/${id}`).set(bearer(key));
  if (res.status !== 200) throw new Error(`GET /v1/jobs/${id}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as JobView;
}

/** Every job of `jobIds`, read through the API. */
export function getJobs(t: TestApp, key: string, jobIds: string[]): Promise<JobView[]> {
  return Promise.all(jobIds.map((id) => getJob(t, key, id)));
}

export async function getAccount(t: TestApp, key: string, id: string): Promise<AccountView> {
  const res = await t.http().get(`/v1/accounts/${id}`).set(bearer(key));
  if (res.status !== 200) throw new Error(`GET /v1/accounts/${id}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as AccountView;
}

export async function getPost(t: TestApp, key: string, id: string): Promise<PostView> {
  const res = await t.http().get(`/v1/posts/${id}`).set(bearer(key));
  if (res.status !== 200) throw new Error(`GET /v1/posts/${id}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as PostView;
}

/** Polls GET /v1/jobs/:id until `done(job)` holds. */
export async function waitForJob<T extends { status: string; attempts: unknown[] } = JobView>(
  t: TestApp,
  key: string,
  jobId: string,
  done: (job: T) => boolean,
  timeoutMs = DEADLINE_MS,
): Promise<T> {
  return pollUntil(
    `job ${jobId} to reach the expected state`,
    () => getJob(t, key, jobId) as Promise<unknown> as Promise<T>,
    done,
    timeoutMs,
  );
}

/** Polls GET /v1/posts/:id until `done(post)` holds. */
export async function waitForPost(
  t: TestApp,
  key: string,
  postId: string,
  done: (post: PostView) => boolean,
  timeoutMs = DEADLINE_MS,
): Promise<PostView> {
  return pollUntil(`post ${postId} to reach the expected state`, () => getPost(t, key, postId), done, timeoutMs);
}

// ---------------------------------------------------------------------------------------------
// Factories, through the API as a user would

export interface WebhookAccount {
  id: string;
  secret: string;
}

/** A webhook account pointing at `url`, via the API; its signing secret is returned once. */
export async function createWebhookAccount(
  t: TestApp,
  key: string,
  url: string,
  extra: Record<string, unknown> = {},
): Promise<WebhookAccount> {
  const res = await t
    .http()
    .post('/v1/accounts')
    .set(bearer(key))
    .send({ provider: 'webhook', name: 'Blog', config: { url }, ...extra });
  if (res.status !== 201) throw new Error(`account creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.id, secret: res.body.secret };
}

/**
 * A Bluesky account connected with an app password (POST /v1/accounts), as a person would: the
 * handle and app password of an account on a test PDS (`service`: the PDS or a proxy in front
 * of it). Returns its id; throws with the API's answer when it is not 201.
 */
export async function connectBlueskyAccount(
  t: TestApp,
  key: string,
  account: { handle: string; appPassword: string },
  service: string,
  name: string = account.handle,
): Promise<string> {
  const res = await t
    .http()
    .post('/v1/accounts')
    .set(bearer(key))
    .send({ provider: 'bluesky', name, config: { identifier: account.handle, appPassword: account.appPassword, service } });
  if (res.status !== 201) throw new Error(`bluesky account creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

export async function createPost(t: TestApp, key: string, body: Record<string, unknown>): Promise<{ id: string; jobs: { id: string }[] }> {
  const res = await t.http().post('/v1/posts').set(bearer(key)).send(body);
  if (res.status !== 201) throw new Error(`post creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** `n` posts to one account, made at once; their job ids in post order. */
export async function postMany(t: TestApp, key: string, accountId: string, n: number, label = 'Post'): Promise<string[]> {
  const posts = await Promise.all(
    Array.from({ length: n }, (_, i) => createPost(t, key, { text: `${label} ${i + 1}`, targets: [{ accountId }] })),
  );
  return posts.map((p) => p.jobs[0].id);
}

// ---------------------------------------------------------------------------------------------
// The fixture

/** A job's row as the database holds it, with the attempt rows written for it. */
export interface JobRow {
  id: string;
  status: string;
  attempt_count: number;
  /** attempt rows */
  attempts: number;
  lease_owner: string | null;
}

export interface EngineFixture {
  /** The app of the file (or of the test, with `{ each: true }`); set once beforeAll/beforeEach ran. */
  readonly t: TestApp;
  /** Its bootstrap (admin) API key. */
  readonly key: string;
  /** A loopback receiver, closed after the test. */
  receiver(handler?: ReceiverHandler): Promise<Receiver>;
  /**
   * Another worker process (an in-process Nest app with its worker, `fastEngine(overrides)`) on
   * `of`'s database (default: the fixture's app), with the same credentials and bootstrap keys
   * (hosts sharing a database share them); with `of` null, on a fresh database of its own.
   * Closed after the test.
   */
  worker(overrides?: Partial<HeraldConfig>, of?: TestApp | null): Promise<TestApp>;
  account(url: string, extra?: Record<string, unknown>): Promise<WebhookAccount>;
  post(body: Record<string, unknown>): Promise<{ id: string; jobs: { id: string }[] }>;
  postMany(accountId: string, n: number, label?: string): Promise<string[]>;
  job(id: string): Promise<JobView>;
  jobs(ids: string[]): Promise<JobView[]>;
  accountView(id: string): Promise<AccountView>;
  postView(id: string): Promise<PostView>;
  waitForJob(id: string, done: (job: JobView) => boolean, timeoutMs?: number): Promise<JobView>;
  /** The jobs' rows, straight from the database (for states the API folds together). */
  jobRows(ids: string[]): Promise<JobRow[]>;
  /** One query on the database of the fixture's app (or of `on`). */
  sql<R extends Record<string, unknown>>(text: string, params?: unknown[], on?: TestApp): Promise<R[]>;
  /**
   * The event before a "nothing more happens" check: a post to an account and receiver of its
   * own, made now and waited for until delivered by `via`'s worker (default: the fixture's app).
   * Its claim round started after everything the test did before, and claims take the due jobs
   * of every account in run_at order: a job that round could wrongly take (paused, disabled,
   * behind an open circuit) would have been taken with it or before. So once the barrier is
   * delivered, the jobs' rows say for certain whether anything else was claimed.
   */
  barrier(via?: TestApp): Promise<void>;
}

/**
 * Registers the hooks of an engine test file (call it inside `describe`): boots the app with
 * `fastEngine(config)` before all tests (before each with `each`), closes the receivers and extra
 * workers a test made after it, and the app at the end. `config` may be a function, evaluated at
 * boot (for settings that need servers started in an earlier hook).
 */
export function useEngine(
  config: Partial<HeraldConfig> | (() => Partial<HeraldConfig>) = {},
  options: { each?: boolean } = {},
): EngineFixture {
  let app: TestApp | null = null;
  const receivers: Receiver[] = [];
  const extra: TestApp[] = [];
  const boot = async () => {
    app = await bootEngine(typeof config === 'function' ? config() : config);
  };
  const close = async () => {
    await app?.close();
    app = null;
  };
  const current = (): TestApp => {
    if (!app) throw new Error('the engine fixture is used outside a test (its app is booted in beforeAll/beforeEach)');
    return app;
  };
  if (options.each) beforeEach(boot);
  else beforeAll(boot);
  afterEach(async () => {
    await Promise.all(extra.splice(0).map((a) => a.close()));
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });
  if (options.each) afterEach(close);
  else afterAll(close);

  const fixture: EngineFixture = {
    get t() {
      return current();
    },
    get key() {
      return current().adminKey;
    },
    async receiver(handler) {
      const r = await startReceiver(handler);
      receivers.push(r);
      return r;
    },
    async worker(overrides = {}, of) {
      const peer = of === undefined ? current() : of;
      const w = peer
        ? await bootEngine(
            { secretKey: peer.config.secretKey, bootstrapApiKey: peer.config.bootstrapApiKey, ...overrides },
            peer.databaseUrl,
          )
        : await bootEngine(overrides);
      extra.push(w);
      return w;
    },
    account: (url, more) => createWebhookAccount(current(), current().adminKey, url, more),
    post: (body) => createPost(current(), current().adminKey, body),
    postMany: (accountId, n, label) => postMany(current(), current().adminKey, accountId, n, label),
    job: (id) => getJob(current(), current().adminKey, id),
    jobs: (ids) => getJobs(current(), current().adminKey, ids),
    accountView: (id) => getAccount(current(), current().adminKey, id),
    postView: (id) => getPost(current(), current().adminKey, id),
    waitForJob: (id, done, timeoutMs) => waitForJob<JobView>(current(), current().adminKey, id, done, timeoutMs),
    jobRows: (ids) => fixture.sql<JobRow & Record<string, unknown>>(JOB_ROWS_SQL, [ids]),
    sql: <R extends Record<string, unknown>>(text: string, params: unknown[] = [], on = current()) =>
      withClient(on.databaseUrl, async (db) => (await db.query<R>(text, params)).rows),
    async barrier(via = current()) {
      const r = await fixture.receiver(() => ({ status: 200, body: { id: 'barrier' } }));
      const account = await createWebhookAccount(via, via.adminKey, r.urlFor('/barrier'), { name: 'Barrier' });
      const post = await createPost(via, via.adminKey, { text: 'barrier', targets: [{ accountId: account.id }] });
      await waitForJob<JobView>(via, via.adminKey, post.jobs[0].id, (j) => j.status === 'succeeded');
    },
  };
  return fixture;
}

// ---------------------------------------------------------------------------------------------

export interface PortServer {
  /** Arrival time of every request. */
  readonly arrivals: Date[];
  close(): Promise<void>;
}

/**
 * A plain HTTP server answering every request with `status` and a JSON body, listening on a
 * given loopback port (startReceiver always picks its own port).
 */
export async function listenOn(port: number, status = 200): Promise<PortServer> {
  const arrivals: Date[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      arrivals.push(new Date());
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true }));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    arrivals,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}
