import { UpdateAccountDto } from '../../src/accounts/accounts.dto';
import { AccountsModule } from '../../src/accounts/accounts.module';
import { AccountsService } from '../../src/accounts/accounts.service';
import type { AccountView } from '../../src/accounts/account.types';
import type { HeraldConfig } from '../../src/config/config';
import { DeadLetterModule } from '../../src/dead-letter/dead-letter.module';
import { JobsModule } from '../../src/jobs/jobs.module';
import { JobsService, JobWithAttempts } from '../../src/jobs/jobs.service';
import { PostsModule } from '../../src/posts/posts.module';
import { PostsService } from '../../src/posts/posts.service';
import type { PostView } from '../../src/posts/post.types';
import { WorkerModule } from '../../src/worker/worker.module';
import type { JobRow, WebhookAccount } from './engine';
import { JOB_ROWS_SQL } from './database';
import { Medium, MediumModule, useMedium } from './medium';
import { createPost, webhookAccount } from './medium-factories';
import { DEADLINE_MS, pollUntil } from './poll';
import { Receiver, ReceiverHandler, startReceiver } from './receiver';
import { fastEngine } from './config';

/**
 * The publish engine's medium fixture (./medium.ts): the worker with the modules a post goes
 * through (accounts, posts, jobs, the dead-letter queue) on a fresh database, loopback receivers,
 * and the same factories and reads as ./engine.ts's useEngine, made through the services the
 * API's controllers call (input validated by the app's pipe) instead of over HTTP. For engine
 * tests whose subject is the worker and the queue; tests of what the API answers keep useEngine.
 *
 *   describe('…', () => {
 *     const engine = useMediumEngine({ circuit: NO_BREAKER });
 *     it('…', async () => {
 *       const r = await engine.receiver();             // closed after the test
 *       const account = await engine.account(r.urlFor('/hook'));
 *       const [jobId] = await engine.postMany(account.id, 1);
 *       await engine.waitForJob(jobId, (j) => j.status === 'succeeded');
 *     });
 *   });
 *
 * Everything is done as the bootstrap key of the database (the workspace useEngine's tests use).
 */

export interface MediumEngine {
  /** The medium context (services: `engine.m.get(Service)`). */
  readonly m: Medium;
  /** A loopback receiver, closed after the test. */
  receiver(handler?: ReceiverHandler): Promise<Receiver>;
  /** A webhook account pointing at `url` (AccountsService.create, as POST /v1/accounts); its signing secret. */
  account(url: string, extra?: Record<string, unknown>): Promise<WebhookAccount>;
  /** PATCH /v1/accounts/:id's service call. */
  updateAccount(id: string, body: Record<string, unknown>): Promise<AccountView>;
  /** A post (PostsService.create, as POST /v1/posts). */
  post(body: Record<string, unknown>): Promise<PostView>;
  postMany(accountId: string, n: number, label?: string): Promise<string[]>;
  job(id: string): Promise<JobWithAttempts>;
  jobs(ids: string[]): Promise<JobWithAttempts[]>;
  accountView(id: string): Promise<AccountView>;
  postView(id: string): Promise<PostView>;
  waitForJob(id: string, done: (job: JobWithAttempts) => boolean, timeoutMs?: number): Promise<JobWithAttempts>;
  /** The jobs' rows, straight from the database (for states the API folds together). */
  jobRows(ids: string[]): Promise<JobRow[]>;
  sql<R extends Record<string, unknown>>(text: string, params?: unknown[]): Promise<R[]>;
  /** As useEngine's barrier: a post to an account and receiver of its own, waited for until delivered. */
  barrier(): Promise<void>;
}

/** The modules of the engine's medium context. */
export const ENGINE_MODULES: MediumModule[] = [WorkerModule, AccountsModule, PostsModule, JobsModule, DeadLetterModule];

/**
 * Registers the hooks (call it inside `describe`): the context with `fastEngine(config)` before all
 * tests, the receivers a test made closed after it, the context after all.
 */
export function useMediumEngine(config: Partial<HeraldConfig> | (() => Partial<HeraldConfig>) = {}): MediumEngine {
  const m = useMedium({ modules: ENGINE_MODULES, config: () => fastEngine(typeof config === 'function' ? config() : config) });
  const receivers: Receiver[] = [];
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });

  const account = (url: string, extra: Record<string, unknown> = {}) => webhookAccount(m, m.admin, url, extra);
  const post = (body: Record<string, unknown>) => createPost(m, m.admin, body);
  const job = (id: string) => m.get(JobsService).get(m.admin.workspaceId, id);
  const waitForJob = (id: string, done: (j: JobWithAttempts) => boolean, timeoutMs = DEADLINE_MS) =>
    pollUntil(`job ${id} to reach the expected state`, () => job(id), done, timeoutMs);

  const engine: MediumEngine = {
    m,
    async receiver(handler) {
      const r = await startReceiver(handler);
      receivers.push(r);
      return r;
    },
    account,
    updateAccount: async (id, body) => m.get(AccountsService).update(m.admin, id, await m.input(UpdateAccountDto, body)),
    post,
    async postMany(accountId, n, label = 'Post') {
      const posts = await Promise.all(Array.from({ length: n }, (_, i) => post({ text: `${label} ${i + 1}`, targets: [{ accountId }] })));
      return posts.map((p) => p.jobs[0].id);
    },
    job,
    jobs: (ids) => Promise.all(ids.map(job)),
    accountView: (id) => m.get(AccountsService).get(m.admin.workspaceId, id),
    postView: (id) => m.get(PostsService).get(m.admin.workspaceId, id),
    waitForJob,
    jobRows: (ids) => m.sql<JobRow & Record<string, unknown>>(JOB_ROWS_SQL, [ids]),
    sql: (text, params) => m.sql(text, params),
    async barrier() {
      const r = await engine.receiver(() => ({ status: 200, body: { id: 'barrier' } }));
      const a = await account(r.urlFor('/barrier'), { name: 'Barrier' });
      const p = await post({ text: 'barrier', targets: [{ accountId: a.id }] });
      await waitForJob(p.jobs[0].id, (j) => j.status === 'succeeded');
    },
  };
  return engine;
}
