import type { Tx } from '../../database/db';

const SET = `SELECT set_config('enable_nestloop', $1, true)`;

/**
 * A named statement that matches a batch (an unnest of job ids and attempt numbers) against
 * job_state, run with `enable_nestloop` off for it alone: set and restored around it in the same
 * pipeline (no round trip added), transaction-local, so the rest of the round keeps its nested
 * loops (the claim's scan is made of them: claim-candidates.ts).
 *
 * Why: the generic plan cached for such a statement estimates the in-flight jobs at one row (a
 * job is rarely in_progress when ANALYZE samples the table) and the unnest at 10, so it walked
 * the in-flight jobs and, for each, scanned the whole batch: n² comparisons. For the record of
 * 100 outcomes that was 65 µs of the statement's ~80 µs of database time per job (auto_explain:
 * "Rows Removed by Join Filter: 9900"); a hash join does the same match in one pass. Record,
 * release and expire of leased jobs share the shape, so they share this.
 */
export async function preparedWithoutNestedLoops<T>(tx: Tx, name: string, sql: string, values: readonly unknown[]): Promise<T[]> {
  const [, rows] = await Promise.all([
    tx.prepared('herald_nestloop_off', SET, ['off']),
    tx.prepared<T>(name, sql, values),
    tx.prepared('herald_nestloop_on', SET, ['on']),
  ]);
  return rows;
}
