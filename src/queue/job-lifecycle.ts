import type { Decision } from '../retry/decide';
import type { JobStatus } from '../vocabulary/vocabulary';

/**
 * A job's state (the `jobs.status` column; its CHECK constraint lists the same values): the
 * vocabulary's (its list, JOB_STATUSES, is there too). Imported as a type only: this file's
 * transition table stands alone at run time (scripts/transition-table.js draws the docs from it).
 */
export type { JobStatus };

/**
 * Every change of a job's state, in one table: which operation may move a job from which state
 * to which. The queue module is the only writer of `jobs`; each operation below is one SQL file
 * in ./sql, and the status guard in its WHERE clause is built from this table (`guard`), so
 * the SQL cannot allow what the table does not. test/job-transitions.test.ts runs every
 * operation's statement on a job in every state on PostgreSQL and checks the result against this
 * table (the state it names, or the row untouched); docs/delivery.md's table is drawn from it
 * (`npm run docs:transitions`).
 *
 * `null` as `from` is a job that does not exist yet (enqueue).
 */
export const JOB_OPERATIONS = [
  'enqueue',
  'claim',
  'record',
  'recordLate',
  'release',
  'expireLeased',
  'reclaim',
  'expire',
  'pause',
  'resume',
  'cancel',
  'reschedule',
  'retry',
  'requeue',
  'edit',
  'discard',
] as const;
export type JobOperation = (typeof JOB_OPERATIONS)[number];

export interface Transition {
  op: JobOperation;
  from: JobStatus | null;
  to: JobStatus;
  /** Why this move exists, for a person reading the table. */
  why: string;
}

const t = (op: JobOperation, from: JobStatus | null, to: JobStatus, why: string): Transition => ({ op, from, to, why });

export const TRANSITIONS: readonly Transition[] = [
  t('enqueue', null, 'scheduled', 'a post is accepted: one job per target, in the same statement as the post'),
  t('enqueue', null, 'paused', 'the target account needs re-authentication or is disabled: the job waits for it'),

  t('claim', 'scheduled', 'in_progress', 'a worker leases a due job of an account that can take an attempt'),

  t('record', 'in_progress', 'succeeded', 'the platform accepted the post'),
  t('record', 'in_progress', 'scheduled', "a transient failure: retried after the backoff or the server's wait"),
  t('record', 'in_progress', 'paused', 'the platform refused the credentials: the account needs a person'),
  t('record', 'in_progress', 'dead', 'permanent, poison, out of attempts, or the retry would fall after publishBy'),

  // An outcome whose lease was lost (the worker could not reach the database for a whole lease):
  // a success is kept wherever the job went meanwhile, because the post did go out.
  ...(['scheduled', 'in_progress', 'paused', 'dead', 'cancelled', 'discarded'] as const).map((from) =>
    t('recordLate', from, 'succeeded', 'a success that came back after its lease was lost: the post went out, keep its remote id'),
  ),
  t('recordLate', 'succeeded', 'succeeded', 'a second success of a job already succeeded: history only'),

  t('release', 'in_progress', 'scheduled', 'a leased job the worker did not start goes back, no attempt spent'),
  t('release', 'in_progress', 'paused', 'given back while its account is not active'),
  t('release', 'in_progress', 'cancelled', 'given back after its account was deleted'),

  t('expireLeased', 'in_progress', 'dead', 'publishBy passed before the leased job could start: expired, no attempt'),

  t('reclaim', 'in_progress', 'scheduled', 'the lease ran out (its worker died or lost the database): retried, the lost attempt counts'),
  t('reclaim', 'in_progress', 'dead', 'the lease ran out on the last attempt of the budget'),

  t('expire', 'scheduled', 'dead', 'publishBy passed while the job waited'),
  t('expire', 'paused', 'dead', 'publishBy passed while its account waited for a person'),

  t('pause', 'scheduled', 'paused', 'its account became needs_reauth or disabled'),
  t('resume', 'paused', 'scheduled', 'its account is active again (credentials re-entered or enabled)'),

  t('cancel', 'scheduled', 'cancelled', 'its post or its account was deleted before it started'),
  t('cancel', 'paused', 'cancelled', 'its post or its account was deleted while it waited'),

  t('reschedule', 'scheduled', 'scheduled', 'its post was edited or moved before any job started'),
  t('reschedule', 'paused', 'paused', 'its post was edited or moved while its account waits'),

  t('retry', 'scheduled', 'scheduled', '"retry now" of a job waiting for its next attempt: due now'),
  t('retry', 'dead', 'scheduled', '"retry now" of a dead job: the revive rule (fresh budget, key, publishBy)'),
  t('retry', 'dead', 'paused', 'retried while its account is not active: waits for the account'),

  t('requeue', 'dead', 'scheduled', 'requeued from the dead-letter queue: the revive rule'),
  t('requeue', 'dead', 'paused', 'requeued with force while its account is not active'),

  t('edit', 'dead', 'dead', 'its payload corrected in the dead-letter queue'),
  t('discard', 'dead', 'discarded', 'dropped from the dead-letter queue, kept for the audit trail'),
];

/** The states `op` may start from (the WHERE guard of its SQL). */
export function fromStates(op: JobOperation): JobStatus[] {
  return [...new Set(TRANSITIONS.filter((x) => x.op === op && x.from !== null).map((x) => x.from as JobStatus))];
}

/** The states `op` may lead to from `from`. */
export function targets(op: JobOperation, from: JobStatus | null): JobStatus[] {
  return TRANSITIONS.filter((x) => x.op === op && x.from === from).map((x) => x.to);
}

export function canTransition(op: JobOperation, from: JobStatus | null, to: JobStatus): boolean {
  return TRANSITIONS.some((x) => x.op === op && x.from === from && x.to === to);
}

/** `<column> IN ('a', 'b')`: the status guard of `op`'s SQL, from the table (never typed by hand). */
export function guard(op: JobOperation, column = 'status'): string {
  const states = fromStates(op);
  if (states.length === 0) throw new Error(`operation ${op} has no source state`);
  return `${column} IN (${states.map((s) => `'${s}'`).join(', ')})`;
}

/**
 * `(<from>, <to>) IN (('dead', 'scheduled'), …)`: the (from, to) pairs `op` may write, from the
 * table; for a statement whose target state comes from its caller (revive), so a target the
 * table does not list for that source changes nothing.
 */
export function pairs(op: JobOperation, fromColumn: string, toExpr: string): string {
  const moves = TRANSITIONS.filter((x) => x.op === op && x.from !== null).map((x) => `('${x.from}', '${x.to}')`);
  if (moves.length === 0) throw new Error(`operation ${op} has no source state`);
  return `(${fromColumn}, ${toExpr}) IN (${moves.join(', ')})`;
}

/** Throws unless the table lets `op` move a job from `from` to `to`: a caller's target is checked before any SQL runs. */
export function assertTransition(op: JobOperation, from: JobStatus | null, to: JobStatus): void {
  if (!canTransition(op, from, to)) throw new Error(`the job lifecycle does not let ${op} move a job from ${from ?? 'new'} to ${to}`);
}

/**
 * record: the state each outcome of an attempt leads a job in flight to. Every outcome is listed
 * (a Record over Decision: the compiler refuses a missing one), and each must be a move of the
 * table (`recordStatusCase` checks it when the SQL is built).
 */
export const RECORD_OUTCOMES: Readonly<Record<Decision, JobStatus>> = {
  succeed: 'succeeded',
  retry: 'scheduled',
  pause: 'paused',
  dead: 'dead',
};

/**
 * `CASE <expr> WHEN 'succeed' THEN 'succeeded' … END`: record's new status, one WHEN per outcome
 * and no ELSE. An outcome not listed gives NULL, which jobs.status (NOT NULL) refuses: the whole
 * statement fails instead of quietly making the job dead.
 */
export function recordStatusCase(expr: string): string {
  const whens = Object.entries(RECORD_OUTCOMES).map(([decision, to]) => {
    assertTransition('record', 'in_progress', to);
    return `WHEN '${decision}' THEN '${to}'`;
  });
  return `CASE ${expr} ${whens.join(' ')} END`;
}

/** `<column> = 'from'`, for an operation whose SQL covers one of its source states only (checked against the table). */
export function guardFrom(op: JobOperation, from: JobStatus, column = 'status'): string {
  if (!fromStates(op).includes(from)) throw new Error(`operation ${op} does not start from ${from}`);
  return `${column} = '${from}'`;
}

/**
 * enqueue: the state a new job starts in. It waits for its time (`scheduled`), or, when its
 * account is not active (needs re-authentication or disabled), for the account (`paused`: resumed
 * when the account is fixed, or dead as expired at its publishBy).
 */
export function enqueueStatus(accountActive: boolean): 'scheduled' | 'paused' {
  return accountActive ? 'scheduled' : 'paused';
}
