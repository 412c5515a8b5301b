import { Injectable } from '@nestjs/common';
import type { Sql, Tx } from '../database/db';
import type { Circuit, CircuitStateName } from '../retry/circuit-breaker';
import { AccountFeedback, AccountForRequeue, AccountStatus, circuitPairs, LockedAccount, statusGuard, statusPairs } from './account-state';

/**
 * The only writer of an account's delivery state: `status`, `status_reason`, the circuit
 * breaker's columns (`circuit_*` — `circuit_closed_at` included, the start of the slow start —,
 * `consecutive_failures`), the slow start's count (`slow_start_leased`) and the last outcome
 * (`last_error`, `last_success_at`). The rest of an account row (creation, name, config,
 * credentials, deletion) is AccountRowRepository's, in this module too: it is the accounts
 * table's one writer (architecture.json "tables"). Each statement's guard comes from the transition tables
 * (account-state.ts): a move they do not list changes nothing.
 *
 * Lock order, everywhere in Herald: job rows first, then account rows in id order. A worker
 * round locks its jobs (record, candidates) before `lockForRound`; the account API changes the
 * account's jobs through the queue before it calls `disable` or `reactivate`.
 */
@Injectable()
export class AccountStateRepository {
  /**
   * The accounts of a round, locked FOR UPDATE in id order: under these locks the in-flight cap
   * and the single half-open probe are exact across processes (a concurrent round waits for our
   * commit and then sees our leases).
   */
  async lockForRound(tx: Tx, ids: string[]): Promise<LockedAccount[]> {
    if (ids.length === 0) return [];
    const rows = await tx.prepared<{
      id: string;
      status: AccountStatus;
      circuitState: CircuitStateName;
      circuitOpenUntil: Date | null;
      consecutiveFailures: number;
      maxInFlight: number;
      circuitClosedAt: Date | null;
      slowStartLeased: number;
      deleted: boolean;
      credentialsVersion: number;
    }>('herald_lock_accounts', LOCK, [ids]);
    return rows.map((r) => ({
      id: r.id,
      status: r.status,
      circuit: { state: r.circuitState, openUntil: r.circuitOpenUntil, consecutiveFailures: r.consecutiveFailures } satisfies Circuit,
      maxInFlight: r.maxInFlight,
      circuitClosedAt: r.circuitClosedAt,
      slowStartLeased: r.slowStartLeased,
      deleted: r.deleted,
      credentialsVersion: r.credentialsVersion,
    }));
  }

  /**
   * feedback (+ refuse / autoDisable): the circuits and statuses the pure feedback
   * (worker/account-feedback.ts) decided, in one statement. A row whose (from, to) pair the
   * tables do not list is left as it was; returns the ids written.
   */
  async applyFeedback(tx: Sql, decided: Map<string, AccountFeedback>): Promise<Set<string>> {
    if (decided.size === 0) return new Set();
    const ids = [...decided.keys()];
    const f = [...decided.values()];
    const rows = await tx.prepared<{ id: string }>('herald_account_feedback', FEEDBACK, [
      ids,
      f.map((x) => x.circuit.state),
      f.map((x) => x.circuit.openUntil),
      f.map((x) => x.circuit.consecutiveFailures),
      f.map((x) => x.opened),
      f.map((x) => x.closed),
      f.map((x) => x.lastError),
      f.map((x) => x.succeeded),
      f.map((x) => x.status?.value ?? null),
      f.map((x) => x.status?.reason ?? null),
    ]);
    return new Set(rows.map((r) => r.id));
  }

  /**
   * probe: the half-open probe a round takes. The circuit stays half_open until the probe's
   * lease would end, so no other round (of any process) sends a second probe meanwhile.
   */
  async startProbes(tx: Sql, accountIds: string[], leaseMs: number): Promise<Set<string>> {
    if (accountIds.length === 0) return new Set();
    const rows = await tx.prepared<{ id: string }>('herald_start_probes', PROBES, [accountIds, leaseMs]);
    return new Set(rows.map((r) => r.id));
  }

  /**
   * The slow start's count: jobs a round leased of accounts whose ramp runs (worker/slow-start.ts,
   * the rate ramp), added under the round's account locks so that every process paces an account
   * from the same count. Only while the circuit is closed; the next close starts it at 0 again.
   */
  async countSlowStartLeases(tx: Sql, leased: Map<string, number>): Promise<void> {
    if (leased.size === 0) return;
    await tx.prepared('herald_slow_start_leases', SLOW_START_LEASES, [[...leased.keys()], [...leased.values()]]);
  }

  /**
   * The accounts of jobs a person sends again (requeue, retry), after the jobs (lock order).
   * FOR SHARE: their status cannot change until the caller commits (refuse and autoDisable take
   * FOR UPDATE in a round), so the target decided from it still holds at commit; concurrent
   * requeues do not block each other.
   */
  shareLock(m: Sql, ids: string[]): Promise<AccountForRequeue[]> {
    return m.query(
      `SELECT id, name, status, status_reason AS "statusReason", deleted_at IS NOT NULL AS deleted
       FROM accounts WHERE id = ANY($1::uuid[]) ORDER BY id FOR SHARE`,
      [[...new Set(ids)].sort()],
    );
  }

  /**
   * reactivate (+ reset): back to `active` with a closed circuit. False when the table refuses it.
   * A circuit that was open or half-open closes now: the account's slow start begins (its receiver
   * was failing when it was disabled or opened).
   */
  async reactivate(m: Sql, workspaceId: string, id: string): Promise<boolean> {
    const rows = await m.query(
      `UPDATE accounts SET status = 'active', status_reason = NULL, circuit_state = 'closed', circuit_open_until = NULL,
         circuit_closed_at = CASE WHEN circuit_state <> 'closed' THEN now() ELSE circuit_closed_at END,
         slow_start_leased = CASE WHEN circuit_state <> 'closed' THEN 0 ELSE slow_start_leased END,
         consecutive_failures = 0, updated_at = now()
       WHERE workspace_id = $1 AND id = $2 AND ${statusGuard('reactivate')}
         AND ${circuitPairs('reset', 'circuit_state', "'closed'")} RETURNING id`,
      [workspaceId, id],
    );
    return rows.length > 0;
  }

  /** disable: a person disables the account. False when the table refuses it. */
  async disable(m: Sql, workspaceId: string, id: string, reason: string): Promise<boolean> {
    const rows = await m.query(
      `UPDATE accounts SET status = 'disabled', status_reason = $3, updated_at = now()
       WHERE workspace_id = $1 AND id = $2 AND ${statusGuard('disable')} RETURNING id`,
      [workspaceId, id, reason],
    );
    return rows.length > 0;
  }
}

const LOCK = `SELECT id, status, circuit_state AS "circuitState", circuit_open_until AS "circuitOpenUntil",
                     consecutive_failures AS "consecutiveFailures", max_in_flight AS "maxInFlight",
                     circuit_closed_at AS "circuitClosedAt", slow_start_leased AS "slowStartLeased", deleted_at IS NOT NULL AS deleted, credentials_version AS "credentialsVersion"
              FROM accounts WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE`;

const FEEDBACK = `UPDATE accounts a SET
               circuit_state = u.state, circuit_open_until = u.open_until, consecutive_failures = u.failures,
               circuit_opened_at = CASE WHEN u.opened THEN now() ELSE a.circuit_opened_at END,
               circuit_closed_at = CASE WHEN u.closed THEN now() ELSE a.circuit_closed_at END,
               slow_start_leased = CASE WHEN u.closed THEN 0 ELSE a.slow_start_leased END,
               last_error = coalesce(u.last_error, a.last_error),
               last_success_at = CASE WHEN u.succeeded THEN now() ELSE a.last_success_at END,
               status = coalesce(u.status, a.status),
               status_reason = CASE WHEN u.status IS NULL THEN a.status_reason ELSE u.status_reason END
             FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::int[], $5::bool[], $6::bool[], $7::text[], $8::bool[], $9::text[], $10::text[])
               AS u(id, state, open_until, failures, opened, closed, last_error, succeeded, status, status_reason)
             WHERE a.id = u.id
               AND ${circuitPairs('feedback', 'a.circuit_state', 'u.state')}
               AND (u.status IS NULL OR ${statusPairs(['refuse', 'autoDisable'], 'a.status', 'u.status')})
             RETURNING a.id`;

const PROBES = `UPDATE accounts a SET circuit_state = 'half_open', circuit_open_until = now() + $2 * interval '1 millisecond'
                WHERE a.id = ANY($1::uuid[]) AND ${circuitPairs('probe', 'a.circuit_state', "'half_open'")}
                RETURNING a.id`;

const SLOW_START_LEASES = `UPDATE accounts a SET slow_start_leased = a.slow_start_leased + u.n
                           FROM unnest($1::uuid[], $2::int[]) AS u(id, n)
                           WHERE a.id = u.id AND a.circuit_state = 'closed'`;
