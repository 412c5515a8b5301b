import { randomUUID } from 'node:crypto';
import type { JobPayload } from '../src/connectors/connector.interface';
import { AuditRepository } from '../src/audit/audit.repository';
import { Db } from '../src/database/db';
import { PostsRepository } from '../src/posts/posts.repository';
import { canTransition, fromStates, JOB_OPERATIONS, JobOperation, JobStatus, targets, TRANSITIONS } from '../src/queue/job-lifecycle';
import { JOB_STATUSES } from '../src/vocabulary/vocabulary';
import { JobLifecycle } from '../src/queue/job-lifecycle.service';
import { JobStore } from '../src/queue/job-store.service';
import { QueueNotifier } from '../src/queue/queue-notifier';
import type { FinishedAttempt, NewJob } from '../src/queue/queue.types';
import { claimJobs } from '../src/queue/sql/claim-jobs';
import { enqueueJobsCte } from '../src/queue/sql/enqueue-jobs';
import { expireLeasedJobs } from '../src/queue/sql/expire-leased-jobs';
import { recordAttempts } from '../src/queue/sql/record-attempts';
import { recordLateSuccesses } from '../src/queue/sql/record-late-successes';
import { releaseJobs } from '../src/queue/sql/release-jobs';
import { reviveDeadJobs } from '../src/queue/sql/revive-dead-jobs';
import { createTestDatabase } from './support/database';

/**
 * The job lifecycle as behaviour: for every operation of the transition table
 * (src/queue/job-lifecycle.ts) and every state a job can be in, a job in that state is written
 * to PostgreSQL, the operation's real statement runs on it (through JobLifecycle and JobStore,
 * or the src/queue/sql module the worker round calls), and the row is read back. Where the table
 * lets the operation leave that state, the job is in the state the table says; everywhere else
 * the row is byte for byte what it was (to_jsonb of the whole row) and no attempt was written.
 *
 * The cases are generated: the expected state of each comes from the table (`canTransition`),
 * never from this file, and a test below checks that every move of the table is exercised by
 * some case. So a statement that allows a move the table does not list, or refuses one it lists,
 * fails here; so does a move added to the table without a case that runs it.
 *
 * One database, one job per case (each with its own post and account, so a per-account statement
 * touches only its case): three INSERTs set every case up, each operation runs once over all
 * its cases where its statement takes many jobs, and one SELECT reads every row before and after.
 * The two sweeps (expire, reclaim) act on the whole table; only their own cases have a passed
 * publishBy or a lease that ran out, so they touch nothing else (and any row they did touch
 * would fail its own case).
 */

const OWNER = 'transitions-worker';
const LEASE_MS = 60_000;
/** Every row starts with this updated_at: any write of the operation moves it. */
const BEFORE = '2001-01-01T00:00:00Z';

interface Row {
  jobId: string;
  accountId: string;
  postId: string;
  from: JobStatus;
}

interface Ctx {
  db: Db;
  lifecycle: JobLifecycle;
  store: JobStore;
  workspaceId: string;
  /** Errors by job: a statement that threw fails the cases it ran for (all of a batch, or the one job). */
  failed: Map<string, unknown>;
}

/** One way to run an operation (an input, a code path): where it leads a job from a state the table lets the operation leave. */
interface Variant {
  name: string;
  /** The state it leads to; `same`: the job stays in its state (reschedule), the row changes. */
  to: JobStatus | 'same';
  /** The source states this code path serves (default: every state the table lets the operation leave). */
  scope?: JobStatus[];
  account?: { status?: 'active' | 'needs_reauth' | 'disabled'; deleted?: boolean; maxAttempts?: number };
  job?: { publishByPast?: boolean; leaseExpired?: boolean };
  /** Runs the operation on the case's jobs, one per state. */
  run(ctx: Ctx, rows: Row[]): Promise<unknown>;
}

const payload: JobPayload = { text: 'rescheduled', title: null, link: null, media: [], metadata: null, scheduledAt: BEFORE };

function finished(row: Row, outcome: Partial<FinishedAttempt>): FinishedAttempt {
  const now = new Date();
  return {
    jobId: row.jobId,
    accountId: row.accountId,
    attemptNumber: 1,
    idempotencyKey: row.jobId,
    startedAt: new Date(now.getTime() - 100),
    finishedAt: now,
    httpStatus: 200,
    networkError: null,
    errorClass: 'success',
    message: null,
    responseExcerpt: null,
    decision: 'succeed',
    delayMs: null,
    deadReason: null,
    remoteId: null,
    remoteUrl: null,
    parts: null,
    warnings: [],
    credentialsVersion: 1,
    refreshedCredentials: null,
    ...outcome,
  };
}

const record =
  (outcome: Partial<FinishedAttempt>) =>
  ({ db }: Ctx, rows: Row[]) =>
    db.transaction((tx) =>
      recordAttempts(
        tx,
        OWNER,
        rows.map((r) => finished(r, outcome)),
      ),
    );
const leased = (rows: Row[]) => rows.map((r) => ({ id: r.jobId, attemptNumber: 1 }));
const eachRow = (work: (ctx: Ctx, row: Row) => Promise<unknown>) => (ctx: Ctx, rows: Row[]) =>
  Promise.all(rows.map((r) => work(ctx, r).catch((err: unknown) => ctx.failed.set(r.jobId, err))));
const revive =
  (status: 'scheduled' | 'paused') =>
  ({ db, lifecycle }: Ctx, rows: Row[]) =>
    // JobLifecycle.revive checks the target first; the rows it is given are every state, dead or not.
    lifecycle.revive(
      db,
      rows.map((r) => ({ id: r.jobId, status })),
      null,
    );

/** Every operation but enqueue (a job that does not exist yet: its own test below), with the inputs that reach each of its moves. */
const VARIANTS: Record<Exclude<JobOperation, 'enqueue'>, Variant[]> = {
  claim: [{ name: 'claimed', to: 'in_progress', run: ({ db }, rows) => db.transaction((tx) => claimJobs(tx, OWNER, ids(rows), LEASE_MS)) }],
  record: [
    { name: 'outcome succeed', to: 'succeeded', run: record({ decision: 'succeed', remoteId: 'at://x/1' }) },
    { name: 'outcome retry', to: 'scheduled', run: record({ decision: 'retry', errorClass: 'transient', httpStatus: 503, delayMs: 1000 }) },
    { name: 'outcome pause', to: 'paused', run: record({ decision: 'pause', errorClass: 'auth', httpStatus: 401 }) },
    {
      name: 'outcome pause of replaced credentials',
      to: 'scheduled',
      run: record({ decision: 'pause', errorClass: 'auth', httpStatus: 401, credentialsVersion: 0 }),
    },
    {
      name: 'outcome dead',
      to: 'dead',
      run: record({ decision: 'dead', errorClass: 'permanent', httpStatus: 400, deadReason: 'permanent' }),
    },
  ],
  recordLate: [
    {
      name: 'late success',
      to: 'succeeded',
      run: ({ db }, rows) =>
        db.transaction((tx) =>
          recordLateSuccesses(
            tx,
            OWNER,
            rows.map((r) => finished(r, { remoteId: 'at://x/late' })),
          ),
        ),
    },
  ],
  release: [
    { name: 'account active', to: 'scheduled', run: ({ db }, rows) => db.transaction((tx) => releaseJobs(tx, OWNER, leased(rows))) },
    {
      name: 'account needs_reauth',
      to: 'paused',
      account: { status: 'needs_reauth' },
      run: ({ db }, rows) => db.transaction((tx) => releaseJobs(tx, OWNER, leased(rows))),
    },
    {
      name: 'account disabled',
      to: 'paused',
      account: { status: 'disabled' },
      run: ({ db }, rows) => db.transaction((tx) => releaseJobs(tx, OWNER, leased(rows))),
    },
    {
      name: 'account deleted',
      to: 'cancelled',
      account: { deleted: true },
      run: ({ db }, rows) => db.transaction((tx) => releaseJobs(tx, OWNER, leased(rows))),
    },
  ],
  expireLeased: [
    { name: 'publishBy passed', to: 'dead', run: ({ db }, rows) => db.transaction((tx) => expireLeasedJobs(tx, OWNER, leased(rows))) },
  ],
  reclaim: [
    {
      name: 'lease ran out, budget left',
      to: 'scheduled',
      account: { maxAttempts: 5 },
      job: { leaseExpired: true },
      run: ({ store }) => store.reclaimExpiredLeases(16, 'another-worker', []),
    },
    {
      name: 'lease ran out on the last attempt',
      to: 'dead',
      account: { maxAttempts: 1 },
      job: { leaseExpired: true },
      run: ({ store }) => store.reclaimExpiredLeases(16, 'another-worker', []),
    },
  ],
  expire: [{ name: 'publishBy passed', to: 'dead', job: { publishByPast: true }, run: ({ store }) => store.expireDeadlines() }],
  pause: [
    {
      name: 'account needs a person',
      to: 'paused',
      account: { status: 'needs_reauth' },
      run: eachRow(({ db, lifecycle }, r) => lifecycle.pauseAccount(db, r.accountId)),
    },
  ],
  resume: [
    { name: 'account active again', to: 'scheduled', run: eachRow(({ db, lifecycle }, r) => lifecycle.resumeAccount(db, r.accountId)) },
  ],
  cancel: [
    {
      name: 'post deleted',
      to: 'cancelled',
      run: eachRow(({ db, lifecycle, workspaceId }, r) => lifecycle.cancelPost(db, workspaceId, r.postId)),
    },
    {
      name: 'account deleted',
      to: 'cancelled',
      run: eachRow(({ db, lifecycle, workspaceId }, r) => lifecycle.cancelAccount(db, workspaceId, r.accountId)),
    },
  ],
  reschedule: [
    {
      name: 'post edited',
      to: 'same',
      run: eachRow(({ db, lifecycle }, r) => lifecycle.reschedulePost(db, r.postId, new Date(Date.now() + 3_600_000), null, () => payload)),
    },
  ],
  retry: [
    {
      name: 'retry now of a waiting job',
      to: 'scheduled',
      scope: ['scheduled'],
      run: eachRow(({ db, lifecycle, workspaceId }, r) => lifecycle.retryNow(db, workspaceId, r.jobId)),
    },
    { name: 'revive to the queue', to: 'scheduled', scope: ['dead'], run: revive('scheduled') },
    { name: 'revive to wait for its account', to: 'paused', scope: ['dead'], run: revive('paused') },
  ],
  requeue: [
    { name: 'revive to the queue', to: 'scheduled', run: revive('scheduled') },
    { name: 'revive to wait for its account', to: 'paused', run: revive('paused') },
  ],
  edit: [
    { name: 'payload corrected', to: 'dead', run: eachRow(({ db, lifecycle }, r) => lifecycle.editDeadPayload(db, r.jobId, payload)) },
  ],
  discard: [{ name: 'dropped', to: 'discarded', run: eachRow(({ db, lifecycle }, r) => lifecycle.discard(db, r.jobId)) }],
};

function ids(rows: Row[]): string[] {
  return rows.map((r) => r.jobId);
}

interface Case {
  op: JobOperation;
  variant: Variant;
  from: JobStatus;
  /** The state the table says the job ends in, or `unchanged` when the table does not let this run move it. */
  expected: JobStatus | 'unchanged';
  row: Row;
}

const CASES: Case[] = (Object.entries(VARIANTS) as [Exclude<JobOperation, 'enqueue'>, Variant[]][]).flatMap(([op, variants]) =>
  variants.flatMap((variant) =>
    JOB_STATUSES.map((from): Case => {
      const to = variant.to === 'same' ? from : variant.to;
      const inScope = (variant.scope ?? fromStates(op)).includes(from);
      return {
        op,
        variant,
        from,
        expected: inScope && canTransition(op, from, to) ? to : 'unchanged',
        row: { jobId: randomUUID(), accountId: randomUUID(), postId: randomUUID(), from },
      };
    }),
  ),
);

interface Setup {
  from: JobStatus;
  jobId?: string;
  accountId?: string;
  postId?: string;
  account?: Variant['account'];
  job?: Variant['job'];
}

/** Writes one job per entry, each with a post and an account of its own, in three statements. */
async function setUp(db: Db, workspaceId: string, specs: Setup[]): Promise<Row[]> {
  const rows = specs.map((x) => ({
    jobId: x.jobId ?? randomUUID(),
    accountId: x.accountId ?? randomUUID(),
    postId: x.postId ?? randomUUID(),
    from: x.from,
    account: x.account ?? {},
    job: x.job ?? {},
  }));
  await db.query(
    `INSERT INTO accounts (id, workspace_id, provider, name, status, status_reason, credentials, retry_policy, deleted_at)
     SELECT r.id, $1, 'webhook', 'case', r.status, CASE WHEN r.status <> 'active' THEN 'set up by the test' END, 'sealed',
            CASE WHEN r.max_attempts IS NOT NULL THEN jsonb_build_object('maxAttempts', r.max_attempts) END,
            CASE WHEN r.deleted THEN now() END
     FROM unnest($2::uuid[], $3::text[], $4::int[], $5::bool[]) AS r(id, status, max_attempts, deleted)`,
    [
      workspaceId,
      rows.map((r) => r.accountId),
      rows.map((r) => r.account.status ?? 'active'),
      rows.map((r) => r.account.maxAttempts ?? null),
      rows.map((r) => r.account.deleted ?? false),
    ],
  );
  await db.query(
    `INSERT INTO posts (id, workspace_id, text, scheduled_at) SELECT id, $1, 'case', now() - interval '1 hour' FROM unnest($2::uuid[]) AS id`,
    [workspaceId, rows.map((r) => r.postId)],
  );
  // A job as the state it is in looks: in flight with a lease (of OWNER, attempt 1), dead and
  // discarded with their reason, finished ones with their time; due a minute ago.
  await db.query(
    `WITH r AS (
       SELECT * FROM unnest($4::uuid[], $5::uuid[], $6::uuid[], $7::text[], $8::bool[], $9::bool[])
         AS r(id, post_id, account_id, status, publish_by_past, lease_expired)
     ), p AS (
       INSERT INTO job_payloads (id, workspace_id, post_id, account_id, provider, idempotency_key, payload, created_at)
       SELECT r.id, $1, r.post_id, r.account_id, 'webhook', r.id::text,
              jsonb_build_object('text', 'case', 'title', NULL, 'link', NULL, 'media', '[]'::jsonb, 'metadata', NULL, 'scheduledAt', $2::text),
              $2::timestamptz
       FROM r
     )
     INSERT INTO job_state (job_id, workspace_id, account_id, status, run_at, publish_by, attempt_count, dead_reason, lease_owner,
                            lease_expires_at, finished_at, updated_at)
     SELECT r.id, $1, r.account_id, r.status, now() - interval '1 minute',
            CASE WHEN r.publish_by_past THEN now() - interval '1 second' END, 1,
            CASE WHEN r.status IN ('dead', 'discarded') THEN 'permanent' END,
            CASE WHEN r.status = 'in_progress' THEN $3 END,
            CASE WHEN r.status = 'in_progress' THEN
              CASE WHEN r.lease_expired THEN now() - interval '1 minute' ELSE now() + interval '1 hour' END END,
            CASE WHEN r.status IN ('succeeded', 'dead', 'cancelled', 'discarded') THEN now() - interval '1 hour' END,
            $2::timestamptz
     FROM r`,
    [
      workspaceId,
      BEFORE,
      OWNER,
      rows.map((r) => r.jobId),
      rows.map((r) => r.postId),
      rows.map((r) => r.accountId),
      rows.map((r) => r.from),
      rows.map((r) => r.job.publishByPast ?? false),
      rows.map((r) => r.job.leaseExpired ?? false),
    ],
  );
  return rows;
}

interface Snapshot {
  row: string;
  status: JobStatus;
  attempts: number;
}

async function snapshot(db: Db): Promise<Map<string, Snapshot>> {
  const rows = await db.query<Snapshot & { id: string }>(
    `SELECT j.id, j.status, to_jsonb(j)::text AS row, (SELECT count(*)::int FROM attempts a WHERE a.job_id = j.id) AS attempts FROM jobs j`,
  );
  return new Map(rows.map((r) => [r.id, r]));
}

describe('the job lifecycle on PostgreSQL', () => {
  let db: Db;
  let ctx: Ctx;
  let before: Map<string, Snapshot>;
  let after: Map<string, Snapshot>;

  beforeAll(async () => {
    const { url } = await createTestDatabase();
    db = new Db({ databaseUrl: url, databasePoolSize: 4, databasePreparedStatements: true, databaseIdleInTransactionTimeoutMs: 0 });
    const lifecycle = new JobLifecycle(db, new QueueNotifier(db));
    const [{ id: workspaceId }] = await db.query<{ id: string }>(`INSERT INTO workspaces (name) VALUES ('transitions') RETURNING id`);
    ctx = { db, lifecycle, store: new JobStore(db), workspaceId, failed: new Map() };

    await setUp(
      db,
      workspaceId,
      CASES.map((c) => ({ ...c.row, account: c.variant.account, job: c.variant.job })),
    );

    before = await snapshot(db);
    for (const variant of new Set(CASES.map((c) => c.variant))) {
      const rows = CASES.filter((c) => c.variant === variant).map((c) => c.row);
      await variant.run(ctx, rows).catch((err: unknown) => rows.forEach((r) => ctx.failed.set(r.jobId, err)));
    }
    after = await snapshot(db);
  });

  afterAll(async () => {
    await db?.onApplicationShutdown();
  });

  it('sets up every case in the state it names', () => {
    for (const c of CASES)
      expect({ job: c.row.jobId, status: before.get(c.row.jobId)?.status }).toEqual({ job: c.row.jobId, status: c.from });
  });

  it.each(CASES.map((c) => [`${c.op} (${c.variant.name}) from ${c.from}: ${c.expected}`, c] as const))('%s', (_name, c) => {
    expect(ctx.failed.get(c.row.jobId)).toBeUndefined();
    const was = before.get(c.row.jobId)!;
    const now = after.get(c.row.jobId)!;
    if (c.expected === 'unchanged') {
      // Refused: the whole row as it was, and no attempt written for it.
      expect(now).toEqual(was);
    } else {
      expect(now.status).toBe(c.expected);
      // Written (updated_at at least moved), also when the state stays the same (reschedule, edit).
      expect(now.row).not.toBe(was.row);
    }
  });

  it('runs every move of the table, from every state each operation may leave', () => {
    const run = new Set(CASES.filter((c) => c.expected !== 'unchanged').map((c) => `${c.op}: ${c.from} → ${c.expected}`));
    const table = TRANSITIONS.filter((t) => t.from !== null).map((t) => `${t.op}: ${t.from} → ${t.to}`);
    expect([...run].sort()).toEqual([...new Set(table)].sort());
    // …and every operation from every state it may not leave, refused.
    for (const op of JOB_OPERATIONS.filter((o) => o !== 'enqueue')) {
      const refused = new Set(CASES.filter((c) => c.op === op && c.expected === 'unchanged').map((c) => c.from));
      for (const from of JOB_STATUSES.filter((s) => !fromStates(op).includes(s)))
        expect({ op, from, refused: refused.has(from) }).toEqual({ op, from, refused: true });
    }
  });

  it('refuses a target the table does not list for a revived job: in the lifecycle, and in the statement', async () => {
    const [row] = await setUp(db, ctx.workspaceId, [{ from: 'dead' }]);
    const was = (await snapshot(db)).get(row.jobId);
    const wrong = [{ id: row.jobId, status: 'succeeded' as 'scheduled' }];
    await expect(ctx.lifecycle.revive(db, wrong, null)).rejects.toThrow('does not let requeue move a job from dead to succeeded');
    // Past the lifecycle's check, the statement's guard (the table's pairs) refuses it too.
    expect(await reviveDeadJobs(db, wrong, null)).toEqual([]);
    expect((await snapshot(db)).get(row.jobId)).toEqual(was);
  });

  it('refuses an outcome it does not know instead of making the job dead', async () => {
    const [row] = await setUp(db, ctx.workspaceId, [{ from: 'in_progress' }]);
    const was = (await snapshot(db)).get(row.jobId);
    const unknown = finished(row, { decision: 'lost' as 'dead', errorClass: 'transient' });
    await expect(db.transaction((tx) => recordAttempts(tx, OWNER, [unknown]))).rejects.toThrow(
      `record: unknown outcome "lost" of job ${row.jobId}`,
    );
    expect((await snapshot(db)).get(row.jobId)).toEqual(was);
  });

  it.each([...JOB_STATUSES])('enqueue of a new job as %s: written only in a state the table starts jobs in', async (status) => {
    const allowed = targets('enqueue', null).includes(status);
    // The statements the post's repository sends: the intake writes everything in one (one round trip).
    const sent: string[] = [];
    const counted = new Proxy(db, {
      get: (target, key) => {
        const value: unknown = Reflect.get(target, key);
        if ((key !== 'query' && key !== 'prepared') || typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          sent.push(key);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const posts = new PostsRepository(counted);
    // The post's audit entry, a piece of the post's statement (as PostsService writes it).
    const auditOf = () =>
      new AuditRepository(db).insertCte(ctx.workspaceId, { kind: 'system', id: null, label: 'test' }, [
        { kind: 'post', action: 'create', subjectId: post.id, summary: 'case' },
      ]);
    const [{ id: account }] = await db.query<{ id: string }>(
      `INSERT INTO accounts (workspace_id, provider, name, credentials) VALUES ($1, 'webhook', 'enqueue', 'sealed') RETURNING id`,
      [ctx.workspaceId],
    );
    const post = {
      id: randomUUID(),
      workspaceId: ctx.workspaceId,
      text: 'enqueued',
      title: null,
      link: null,
      media: [],
      metadata: null,
      thread: null,
      scheduledAt: new Date(),
      publishBy: null,
      draftTargets: null,
      approval: null,
      createdAt: new Date(),
      updatedAt: new Date(),
    };
    const job: NewJob = {
      id: randomUUID(),
      accountId: account,
      provider: 'webhook',
      status: status as 'scheduled',
      textOverride: null,
      idempotencyKey: 'k',
    };
    const input = {
      workspaceId: ctx.workspaceId,
      postId: post.id,
      runAt: post.scheduledAt,
      publishBy: null,
      createdAt: post.createdAt,
      jobs: [job],
    };
    if (allowed) {
      const jobs = ctx.lifecycle.enqueue(input, () => payload);
      await posts.create(post, jobs, null, auditOf(), ctx.lifecycle.eventsCte([]));
      expect(sent).toEqual(['prepared']);
      expect(await db.query(`SELECT status FROM jobs WHERE id = $1`, [job.id])).toEqual([{ status }]);
      expect(await db.query(`SELECT action FROM audit_events WHERE subject_id = $1`, [post.id])).toEqual([{ action: 'create' }]);
    } else {
      expect(() => ctx.lifecycle.enqueue(input, () => payload)).toThrow(`does not let enqueue move a job from new to ${status}`);
      // The statement itself, past the lifecycle's check: refused whole, the post with it.
      await expect(
        (() => {
          const jobs = enqueueJobsCte(input, () => payload);
          return posts.create(post, jobs, null, auditOf(), ctx.lifecycle.eventsCte([]));
        })(),
      ).rejects.toThrow(/null value in column "status"/);
      expect(
        await db.query(
          `SELECT id FROM posts WHERE id = $1 UNION ALL SELECT id FROM jobs WHERE id = $2 UNION ALL SELECT subject_id FROM audit_events WHERE subject_id = $1`,
          [post.id, job.id],
        ),
      ).toEqual([]);
    }
  });
});
