import type { Tx } from '../../database/db';

/**
 * Leases per account (all, and other processes'), read by a round under its account locks, after
 * its own record: the in-flight cap is exact because a concurrent round of another process waits
 * for these locks and then sees our leases.
 */
const IN_FLIGHT = `SELECT account_id AS "accountId", count(*)::int AS total, (count(*) FILTER (WHERE lease_owner <> $2))::int AS others
                   FROM job_state WHERE status = 'in_progress' AND account_id = ANY($1::uuid[]) GROUP BY account_id`;

export async function inFlightCounts(tx: Tx, owner: string, accountIds: string[]): Promise<Map<string, { total: number; others: number }>> {
  const rows = await tx.prepared<{ accountId: string; total: number; others: number }>('herald_in_flight', IN_FLIGHT, [accountIds, owner]);
  return new Map(rows.map((r) => [r.accountId, { total: r.total, others: r.others }]));
}
