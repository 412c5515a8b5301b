import type { Tx } from '../../database/db';
import type { Circuit, CircuitStateName } from '../../retry/circuit-breaker';
import type { AccountFeedback, LockedAccount } from '../queue.types';

/**
 * The account side of a worker round: the queue owns the circuit-breaker columns of `accounts`
 * (circuit_*, consecutive_failures, last_error, last_success_at) and moves `status` to
 * needs_reauth or disabled when attempts say so (docs/delivery.md). Everything else about an account
 * belongs to AccountsService.
 *
 * Lock order, everywhere in Herald: job rows first, then account rows in id order. A round locks
 * its jobs (record, candidates) before these.
 */

interface CircuitRow {
  id: string;
  status: string;
  circuitState: CircuitStateName;
  circuitOpenUntil: Date | null;
  consecutiveFailures: number;
  maxInFlight: number;
  deleted: boolean;
  credentialsVersion: number;
}

const LOCK = `SELECT id, status, circuit_state AS "circuitState", circuit_open_until AS "circuitOpenUntil",
                     consecutive_failures AS "consecutiveFailures", max_in_flight AS "maxInFlight",
                     deleted_at IS NOT NULL AS deleted, credentials_version AS "credentialsVersion"
              FROM accounts WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE`;

/**
 * The accounts of a round, locked FOR UPDATE in id order: under these locks the in-flight cap and
 * the single half-open probe are exact across processes (a concurrent round waits for our commit
 * and then sees our leases).
 */
export async function lockRoundAccounts(tx: Tx, ids: string[]): Promise<LockedAccount[]> {
  if (ids.length === 0) return [];
  const rows = await tx.prepared<CircuitRow>('herald_lock_accounts', LOCK, [ids]);
  return rows.map((r) => ({
    id: r.id,
    status: r.status,
    circuit: { state: r.circuitState, openUntil: r.circuitOpenUntil, consecutiveFailures: r.consecutiveFailures } satisfies Circuit,
    maxInFlight: r.maxInFlight,
    deleted: r.deleted,
    credentialsVersion: r.credentialsVersion,
  }));
}

const FEEDBACK = `UPDATE accounts a SET
               circuit_state = u.state, circuit_open_until = u.open_until, consecutive_failures = u.failures,
               circuit_opened_at = CASE WHEN u.opened THEN now() ELSE a.circuit_opened_at END,
               last_error = coalesce(u.last_error, a.last_error),
               last_success_at = CASE WHEN u.succeeded THEN now() ELSE a.last_success_at END,
               status = coalesce(u.status, a.status),
               status_reason = CASE WHEN u.status IS NULL THEN a.status_reason ELSE u.status_reason END
             FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::int[], $5::bool[], $6::text[], $7::bool[], $8::text[], $9::text[])
               AS u(id, state, open_until, failures, opened, last_error, succeeded, status, status_reason)
             WHERE a.id = u.id`;

/** The circuits and statuses the pure feedback (account-feedback.ts) decided, in one statement. */
export async function writeAccountFeedback(tx: Tx, decided: Map<string, AccountFeedback>): Promise<void> {
  if (decided.size === 0) return;
  const ids = [...decided.keys()];
  const f = [...decided.values()];
  await tx.prepared('herald_account_feedback', FEEDBACK, [
    ids,
    f.map((x) => x.circuit.state),
    f.map((x) => x.circuit.openUntil),
    f.map((x) => x.circuit.consecutiveFailures),
    f.map((x) => x.opened),
    f.map((x) => x.lastError),
    f.map((x) => x.succeeded),
    f.map((x) => x.status?.value ?? null),
    f.map((x) => x.status?.reason ?? null),
  ]);
}

const IN_FLIGHT = `SELECT account_id AS "accountId", count(*)::int AS total, (count(*) FILTER (WHERE lease_owner <> $2))::int AS others
                   FROM jobs WHERE status = 'in_progress' AND account_id = ANY($1::uuid[]) GROUP BY account_id`;

/** Leases per account (all, and other processes'), read under the account locks, after this round's record. */
export async function inFlightCounts(tx: Tx, owner: string, accountIds: string[]): Promise<Map<string, { total: number; others: number }>> {
  const rows = await tx.prepared<{ accountId: string; total: number; others: number }>('herald_in_flight', IN_FLIGHT, [accountIds, owner]);
  return new Map(rows.map((r) => [r.accountId, { total: r.total, others: r.others }]));
}

const PROBES = `UPDATE accounts SET circuit_state = 'half_open', circuit_open_until = now() + $2 * interval '1 millisecond'
                WHERE id = ANY($1::uuid[])`;

/**
 * The half-open probe this round takes: the circuit stays half_open until the probe's lease would
 * end, so no other round (of any process) sends a second probe meanwhile.
 */
export async function startProbes(tx: Tx, accountIds: string[], leaseMs: number): Promise<void> {
  if (accountIds.length === 0) return;
  await tx.prepared('herald_start_probes', PROBES, [accountIds, leaseMs]);
}

const CREDENTIALS = `UPDATE accounts a SET credentials = u.sealed, credentials_version = a.credentials_version + 1, updated_at = now()
                     FROM unnest($1::uuid[], $2::text[], $3::int[]) AS u(id, sealed, based_on)
                     WHERE a.id = u.id AND a.credentials_version = u.based_on AND a.deleted_at IS NULL
                     RETURNING a.id`;

/**
 * Credentials an attempt refreshed (a new Bluesky session, a new LinkedIn token), stored only if
 * nobody changed the account's credentials since the attempt read them (credentials_version):
 * a password or token a person saved while the attempt ran is newer and wins; the attempt's
 * session is simply dropped (the next attempt starts from the person's credentials). Returns
 * the accounts whose credentials were stored.
 */
export async function storeRefreshedCredentials(
  tx: Tx,
  updates: { accountId: string; sealed: string; basedOnVersion: number }[],
): Promise<Set<string>> {
  if (updates.length === 0) return new Set();
  const rows = await tx.prepared<{ id: string }>('herald_store_credentials', CREDENTIALS, [
    updates.map((u) => u.accountId),
    updates.map((u) => u.sealed),
    updates.map((u) => u.basedOnVersion),
  ]);
  return new Set(rows.map((r) => r.id));
}
