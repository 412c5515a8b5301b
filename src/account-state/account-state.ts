import type { Circuit, CircuitStateName } from '../retry/circuit-breaker';

/**
 * An account's delivery state in two tables, as the jobs' is in queue/job-lifecycle.ts: which
 * operation may move an account's `status`, and its circuit breaker's `circuit_state`, from which
 * value to which. account-state.repository.ts is the only writer of these columns, and the
 * guard of each statement is built from these tables (`statusGuard`, `circuitPairs`), so the
 * SQL cannot make a move the table does not list. test/account-state-transitions.test.ts runs
 * every (operation, from) pair of both tables on PostgreSQL.
 */

export type AccountStatus = 'active' | 'needs_reauth' | 'disabled';
export const ACCOUNT_STATUSES: readonly AccountStatus[] = ['active', 'needs_reauth', 'disabled'];
export const CIRCUIT_STATES: readonly CircuitStateName[] = ['closed', 'open', 'half_open'];

export const STATUS_OPERATIONS = ['refuse', 'autoDisable', 'disable', 'reactivate'] as const;
export type StatusOperation = (typeof STATUS_OPERATIONS)[number];

export const CIRCUIT_OPERATIONS = ['feedback', 'probe', 'reset'] as const;
export type CircuitOperation = (typeof CIRCUIT_OPERATIONS)[number];

export interface StateTransition<Op, S> {
  op: Op;
  from: S;
  to: S;
  /** Why this move exists, for a person reading the table. */
  why: string;
}

const s = (op: StatusOperation, from: AccountStatus, to: AccountStatus, why: string): StateTransition<StatusOperation, AccountStatus> => ({
  op,
  from,
  to,
  why,
});
const c = (
  op: CircuitOperation,
  from: CircuitStateName,
  to: CircuitStateName,
  why: string,
): StateTransition<CircuitOperation, CircuitStateName> => ({
  op,
  from,
  to,
  why,
});

export const STATUS_TRANSITIONS: readonly StateTransition<StatusOperation, AccountStatus>[] = [
  s(
    'refuse',
    'active',
    'needs_reauth',
    'an attempt with the current credentials was refused (401/403 after a refresh): a person must reconnect',
  ),
  s('autoDisable', 'active', 'disabled', 'consecutive failures reached the disable threshold'),
  s('disable', 'active', 'disabled', 'a person disabled the account'),
  s('disable', 'needs_reauth', 'disabled', 'a person disabled an account that was waiting for new credentials'),
  s('reactivate', 'needs_reauth', 'active', 'a person re-entered the credentials (or enabled the account): its circuit closes'),
  s('reactivate', 'disabled', 'active', 'a person enabled the account again: its circuit closes'),
];

export const CIRCUIT_TRANSITIONS: readonly StateTransition<CircuitOperation, CircuitStateName>[] = [
  c('feedback', 'closed', 'closed', 'a success, or failures below the threshold (the count moves)'),
  c('feedback', 'closed', 'open', 'consecutive transient failures reached the threshold: open for a cooldown'),
  c('feedback', 'open', 'open', 'an attempt that was in flight finished while open: it counts, the cooldown does not move'),
  c('feedback', 'open', 'closed', 'an attempt in flight succeeded while open: the receiver answers'),
  c('feedback', 'half_open', 'closed', 'the probe came back (success, or an answer about the payload or credentials)'),
  c('feedback', 'half_open', 'open', 'the probe failed: open for a fresh cooldown'),
  c('probe', 'open', 'half_open', 'the cooldown is over: one round takes the single probe'),
  c('probe', 'half_open', 'half_open', "the probe's lease ran out without an answer: another probe may go"),
  c('reset', 'closed', 'closed', 'reactivated: nothing to close'),
  c('reset', 'open', 'closed', 'reactivated by a person: the circuit closes'),
  c('reset', 'half_open', 'closed', 'reactivated by a person: the circuit closes'),
];

export function statusFrom(op: StatusOperation): AccountStatus[] {
  return [...new Set(STATUS_TRANSITIONS.filter((t) => t.op === op).map((t) => t.from))];
}

export function statusTargets(op: StatusOperation, from: AccountStatus): AccountStatus[] {
  return STATUS_TRANSITIONS.filter((t) => t.op === op && t.from === from).map((t) => t.to);
}

export function circuitTargets(op: CircuitOperation, from: CircuitStateName): CircuitStateName[] {
  return CIRCUIT_TRANSITIONS.filter((t) => t.op === op && t.from === from).map((t) => t.to);
}

/** `<column> IN ('a', 'b')`: the states a status operation starts from, from the table. */
export function statusGuard(op: StatusOperation, column = 'status'): string {
  return `${column} IN (${statusFrom(op)
    .map((x) => `'${x}'`)
    .join(', ')})`;
}

/**
 * `(<from>, <to>) IN (('closed', 'open'), …)`: the (from, to) pairs a circuit operation may
 * write, from the table; for statements whose target comes from the caller (the pure feedback).
 */
export function circuitPairs(op: CircuitOperation, from: string, to: string): string {
  const pairs = CIRCUIT_TRANSITIONS.filter((t) => t.op === op).map((t) => `('${t.from}', '${t.to}')`);
  return `(${from}, ${to}) IN (${pairs.join(', ')})`;
}

/** `(<from>, <to>) IN (…)` for a status operation whose target comes from the caller. */
export function statusPairs(ops: StatusOperation[], from: string, to: string): string {
  const pairs = STATUS_TRANSITIONS.filter((t) => ops.includes(t.op)).map((t) => `('${t.from}', '${t.to}')`);
  return `(${from}, ${to}) IN (${pairs.join(', ')})`;
}

/** An account of a worker round, read under its row lock. */
export interface LockedAccount {
  id: string;
  status: AccountStatus;
  circuit: Circuit;
  maxInFlight: number;
  /** When its circuit last closed after being open or half-open (null: not since this was recorded); the slow start counts from it. */
  circuitClosedAt: Date | null;
  /** Jobs leased since that close while the slow start ran (the rate ramp's count, worker/slow-start.ts). */
  slowStartLeased: number;
  deleted: boolean;
  credentialsVersion: number;
}

/** What a round's finished attempts decided for one account (worker/account-feedback.ts). */
export interface AccountFeedback {
  circuit: Circuit;
  opened: boolean;
  /** The circuit went from open or half-open to closed with these attempts: its slow start begins (worker/slow-start.ts). */
  closed: boolean;
  lastError: string | null;
  succeeded: boolean;
  /** A new status for the account, with the reason shown to people. */
  status: { value: 'needs_reauth' | 'disabled'; reason: string } | null;
}

/** An account as a requeue decides from it (FOR SHARE, after its jobs). */
export interface AccountForRequeue {
  id: string;
  name: string;
  status: AccountStatus;
  statusReason: string | null;
  deleted: boolean;
}
