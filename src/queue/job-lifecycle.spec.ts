import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  assertTransition,
  canTransition,
  fromStates,
  guard,
  guardFrom,
  JOB_OPERATIONS,
  JobOperation,
  JobStatus,
  pairs,
  RECORD_OUTCOMES,
  recordStatusCase,
  targets,
  TRANSITIONS,
} from './job-lifecycle';
import { JOB_STATUSES } from '../vocabulary/vocabulary';

/**
 * The job lifecycle, written out once more as the contract: for every operation, exactly these
 * moves. The walk below checks every (operation, from, to) triple against it, so a move added to
 * or dropped from the table without updating this contract fails here (docs/delivery.md's table
 * is drawn from the code's: src/transition-tables.spec.ts). What the statements do with each
 * move is checked on PostgreSQL by test/job-transitions.test.ts.
 */
const CONTRACT: Record<JobOperation, string[]> = {
  enqueue: ['new>scheduled', 'new>paused'],
  claim: ['scheduled>in_progress'],
  record: ['in_progress>succeeded', 'in_progress>scheduled', 'in_progress>paused', 'in_progress>dead'],
  recordLate: [
    'scheduled>succeeded',
    'in_progress>succeeded',
    'paused>succeeded',
    'dead>succeeded',
    'cancelled>succeeded',
    'discarded>succeeded',
    'succeeded>succeeded',
  ],
  release: ['in_progress>scheduled', 'in_progress>paused', 'in_progress>cancelled'],
  expireLeased: ['in_progress>dead'],
  reclaim: ['in_progress>scheduled', 'in_progress>dead'],
  expire: ['scheduled>dead', 'paused>dead'],
  pause: ['scheduled>paused'],
  resume: ['paused>scheduled'],
  cancel: ['scheduled>cancelled', 'paused>cancelled'],
  reschedule: ['scheduled>scheduled', 'paused>paused'],
  retry: ['scheduled>scheduled', 'dead>scheduled', 'dead>paused'],
  requeue: ['dead>scheduled', 'dead>paused'],
  edit: ['dead>dead'],
  discard: ['dead>discarded'],
};

const FROM: (JobStatus | null)[] = [null, ...JOB_STATUSES];
const name = (s: JobStatus | null) => s ?? 'new';

describe('the job lifecycle table', () => {
  it.each([...JOB_OPERATIONS])('%s: allows exactly the moves of the contract, from every state to every state', (op) => {
    const allowed: string[] = [];
    for (const from of FROM) for (const to of JOB_STATUSES) if (canTransition(op, from, to)) allowed.push(`${name(from)}>${to}`);
    expect(allowed.sort()).toEqual([...CONTRACT[op]].sort());
  });

  it('has a reason for every move and no move twice', () => {
    const keys = TRANSITIONS.map((t) => `${t.op}:${name(t.from)}>${t.to}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const t of TRANSITIONS) expect(t.why.length).toBeGreaterThan(10);
  });

  it('only a claim puts a job in flight, and only the worker takes it out', () => {
    const into = TRANSITIONS.filter((t) => t.to === 'in_progress' && t.from !== 'in_progress').map((t) => t.op);
    expect([...new Set(into)]).toEqual(['claim']);
    const outOf = new Set(TRANSITIONS.filter((t) => t.from === 'in_progress').map((t) => t.op));
    // No person's action (retry, requeue, cancel, reschedule, pause, edit, discard) touches a job in flight.
    expect([...outOf].sort()).toEqual(['expireLeased', 'reclaim', 'record', 'recordLate', 'release'].sort());
  });

  it('a finished job changes only when a lost lease turns out to have published it', () => {
    for (const done of ['succeeded', 'cancelled', 'discarded'] as const) {
      const ops = new Set(TRANSITIONS.filter((t) => t.from === done).map((t) => t.op));
      expect([...ops]).toEqual(['recordLate']);
      expect(targets('recordLate', done)).toEqual(['succeeded']);
    }
  });

  it('a dead job leaves the dead-letter queue only by the revive rule, a discard, or a late success', () => {
    const ops = new Set(TRANSITIONS.filter((t) => t.from === 'dead' && t.to !== 'dead').map((t) => t.op));
    expect([...ops].sort()).toEqual(['discard', 'recordLate', 'requeue', 'retry']);
    // The manual retry and the requeue lead a dead job to the same places (one rule).
    expect(targets('retry', 'dead').sort()).toEqual(targets('requeue', 'dead').sort());
  });

  it('every state is reachable from a new job, and every waiting state can still end', () => {
    const reach = new Set<JobStatus>();
    const frontier: (JobStatus | null)[] = [null];
    while (frontier.length > 0) {
      const from = frontier.pop()!;
      for (const t of TRANSITIONS.filter((x) => x.from === from)) {
        if (!reach.has(t.to)) {
          reach.add(t.to);
          frontier.push(t.to);
        }
      }
    }
    expect([...reach].sort()).toEqual([...JOB_STATUSES].sort());
    for (const waiting of ['scheduled', 'paused', 'in_progress', 'dead'] as const) {
      expect(TRANSITIONS.some((t) => t.from === waiting && t.to !== waiting)).toBe(true);
    }
  });

  it('builds the SQL status guards from the table', () => {
    expect(guard('cancel')).toBe("status IN ('scheduled', 'paused')");
    expect(guard('record', 'j.status')).toBe("j.status IN ('in_progress')");
    expect(fromStates('recordLate').sort()).toEqual(['cancelled', 'dead', 'discarded', 'in_progress', 'paused', 'scheduled', 'succeeded']);
    expect(guardFrom('retry', 'scheduled')).toBe("status = 'scheduled'");
    expect(() => guardFrom('retry', 'paused')).toThrow(/does not start from paused/);
    expect(() => guard('enqueue')).toThrow(/no source state/);
  });

  it("builds guards for a caller's target from the table's (from, to) pairs, and refuses other targets before any SQL", () => {
    expect(pairs('requeue', 'j.status', 'r.status')).toBe("(j.status, r.status) IN (('dead', 'scheduled'), ('dead', 'paused'))");
    expect(() => assertTransition('requeue', 'dead', 'paused')).not.toThrow();
    expect(() => assertTransition('requeue', 'dead', 'succeeded')).toThrow(/does not let requeue move a job from dead to succeeded/);
    expect(() => assertTransition('enqueue', null, 'in_progress')).toThrow(/from new to in_progress/);
  });

  it('record maps every outcome to a move of the table, with no fallback for an outcome it does not know', () => {
    for (const to of Object.values(RECORD_OUTCOMES)) expect(canTransition('record', 'in_progress', to)).toBe(true);
    expect(new Set(Object.values(RECORD_OUTCOMES))).toEqual(new Set(targets('record', 'in_progress')));
    const sql = recordStatusCase('r.applied');
    expect(sql).toBe(
      "CASE r.applied WHEN 'succeed' THEN 'succeeded' WHEN 'retry' THEN 'scheduled' WHEN 'pause' THEN 'paused' WHEN 'dead' THEN 'dead' END",
    );
    expect(sql).not.toMatch(/ELSE/);
  });

  it('every operation that changes an existing job has its SQL in src/queue/sql, guarded by the table', () => {
    const dir = path.join(__dirname, 'sql');
    const text = fs
      .readdirSync(dir)
      .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'))
      .join('\n');
    for (const op of JOB_OPERATIONS.filter((o) => o !== 'enqueue' && o !== 'retry')) {
      expect(text.includes(`guard('${op}'`) || text.includes(`guardFrom('${op}'`) || text.includes(`pairs('${op}'`)).toBe(true);
    }
    // retry: "retry now" of a waiting job here; of a dead job, the revive rule shared with requeue.
    expect(text).toContain("guardFrom('retry', 'scheduled')");
    expect(fromStates('retry')).toEqual(expect.arrayContaining(fromStates('requeue')));
    expect(text).toContain('INSERT INTO job_state');
  });
});
