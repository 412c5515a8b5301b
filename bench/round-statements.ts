import * as fs from 'node:fs';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions, runMigrations } from '../src/database/data-source';
import type { Tx } from '../src/database/db';
import { claimCandidates } from '../src/queue/sql/claim-candidates';
import { claimJobs } from '../src/queue/sql/claim-jobs';
import { recordAttempts } from '../src/queue/sql/record-attempts';
import type { ClaimedJob, FinishedAttempt } from '../src/queue/queue.types';

/**
 * The database's side of a delivery, statement by statement: the worker round's three job
 * statements replayed on one connection, without the worker, the receiver or HTTP, and the CPU
 * of that connection's backend (Linux /proc, so the server must run on this machine) read around
 * each one. Rounds as the worker runs them: BEGIN; record the previous round's 100 outcomes;
 * candidates; claim; COMMIT — 20 accounts, 5 in flight each, 2 leased per slot, so at most
 * 200 jobs are leased at a time, as in the throughput run.
 *
 * What it leaves out (the throughput figure has it): the account statements of a round, the
 * listener, autovacuum and the WAL writer.
 */
export interface StatementCosts {
  jobs: number;
  /** µs of backend CPU per job. */
  candidates: number;
  claim: number;
  record: number;
  commit: number;
}

const BATCH = 100;
const OWNER = 'bench-host:1:000000';
/** The slow start's defaults (WORKER_SLOW_START_MS, WORKER_SLOW_START_RATE): the claim scans the bench runs pass them as the worker does. */
export const BENCH_SLOW_START = { rampMs: 10_000, ratePerS: 20 };

/** User+system CPU (µs) of a local process; the kernel counts it in ticks of 10 ms. */
function cpuUs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(stat[11]) + Number(stat[12])) / 100) * 1e6;
}

function outcomes(jobs: ClaimedJob[]): FinishedAttempt[] {
  const now = new Date();
  return jobs.map((j) => ({
    jobId: j.id,
    accountId: j.accountId,
    attemptNumber: j.attemptNumber,
    idempotencyKey: j.idempotencyKey,
    startedAt: now,
    finishedAt: now,
    httpStatus: 200,
    networkError: null,
    errorClass: 'success',
    message: null,
    responseExcerpt: '{"ok":true}',
    decision: 'succeed',
    delayMs: null,
    deadReason: null,
    remoteId: null,
    remoteUrl: null,
    parts: null,
    warnings: [],
    credentialsVersion: 1,
    refreshedCredentials: null,
  }));
}

/** `jobs` due webhook jobs over 20 accounts in the (empty, unmigrated) database at `url`. */
export async function roundStatements(url: string, jobs: number): Promise<StatementCosts> {
  const ds = await new DataSource(dataSourceOptions(url, 2)).initialize();
  try {
    await runMigrations(ds);
  } finally {
    await ds.destroy();
  }
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(`INSERT INTO workspaces (name) VALUES ('bench')`);
    await c.query(
      `INSERT INTO accounts (workspace_id, provider, name, credentials, max_in_flight)
       SELECT id, 'webhook', 'bench ' || g, 'unused', 5 FROM workspaces, generate_series(1, 20) g`,
    );
    await c.query(
      `INSERT INTO posts (id, workspace_id, text, scheduled_at, created_at)
       SELECT gen_random_uuid(), id, 'bench post', now(), now() FROM workspaces, generate_series(1, $1)`,
      [Math.ceil(jobs / 20)],
    );
    await c.query(
      `WITH w AS (
         INSERT INTO job_payloads (workspace_id, post_id, account_id, provider, idempotency_key, payload)
         SELECT a.workspace_id, p.id, a.id, 'webhook', gen_random_uuid()::text,
                '{"text":"bench post","title":null,"link":null,"media":[],"metadata":null,"scheduledAt":"2026-12-01T00:00:00.000Z"}'
         FROM posts p CROSS JOIN accounts a
         RETURNING id, account_id, workspace_id
       )
       INSERT INTO job_state (job_id, account_id, workspace_id, status, run_at)
       SELECT id, account_id, workspace_id, 'scheduled', now() - interval '1 second' FROM w`,
    );
    await c.query('VACUUM ANALYZE');
    const pid = (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    const tx: Tx = {
      query: async <T>(text: string, values?: readonly unknown[]) => (await c.query(text, values as unknown[])).rows as T[],
      prepared: async <T>(name: string, text: string, values?: readonly unknown[]) =>
        (await c.query({ name, text, values: values as unknown[] })).rows as T[],
      commit: async () => {
        await c.query('COMMIT');
      },
    };
    const spent = { candidates: 0, claim: 0, record: 0, commit: 0 };
    const timed = async <T>(part: keyof typeof spent, work: () => Promise<T>): Promise<T> => {
      const before = cpuUs(pid);
      const result = await work();
      spent[part] += cpuUs(pid) - before;
      return result;
    };
    let previous: ClaimedJob[] = [];
    let recorded = 0;
    for (;;) {
      await c.query('BEGIN');
      if (previous.length > 0) {
        const written = await timed('record', () => recordAttempts(tx, OWNER, outcomes(previous)));
        if (written.size !== previous.length) throw new Error(`bench: ${written.size} of ${previous.length} outcomes recorded`);
      }
      const candidates = await timed('candidates', () => claimCandidates(tx, BATCH, OWNER, 2, BENCH_SLOW_START));
      const claimed =
        candidates.length > 0
          ? await timed('claim', () =>
              claimJobs(
                tx,
                OWNER,
                candidates.map((x) => x.id),
                60_000,
              ),
            )
          : [];
      await timed('commit', () => tx.commit());
      recorded += previous.length;
      previous = claimed;
      if (claimed.length === 0) break;
    }
    const per = (us: number) => us / recorded;
    return {
      jobs: recorded,
      candidates: per(spent.candidates),
      claim: per(spent.claim),
      record: per(spent.record),
      commit: per(spent.commit),
    };
  } finally {
    await c.end();
  }
}
