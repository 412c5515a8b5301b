import fc from 'fast-check';
import { BUDGET, LEASES, SINCE_CLOSE_MS } from '../src/queue/sql/claim-candidates';
import { leaseCapacity, slowStartBudget } from '../src/worker/slow-start';
import { withClient } from './support/database';
import { ENV_ADMIN_URL, requireEnv } from './support/env';

/**
 * The slow start is written twice: in TypeScript for the plan that picks the jobs
 * (leaseCapacity and the rate ramp's slowStartBudget, worker/slow-start.ts) and in SQL for the claim's scan, which must not lock
 * rows the plan will not take nor leave out rows it would (claim-candidates.ts). This runs the
 * scan's own fragments on PostgreSQL for many accounts at once and compares each with the plan.
 *
 * The contract (claim-candidates.ts): the scan counts the time since the close 1 ms longer than
 * the plan, since the plan reads times truncated to milliseconds. So the scan's answer for an
 * account closed `elapsed` ms ago is the plan's answer for `elapsed + 1` ms: one row more at a
 * step of the ramp at most, never one fewer.
 */

interface Case {
  maxInFlight: number;
  prefetch: number;
  rampMs: number;
  /** The rate at the ramp's end, per second (0: no rate ramp). */
  ratePerS: number;
  /** ms since the circuit closed (negative: a close stamped after this transaction began); null: no close recorded. */
  elapsed: number | null;
}

interface Scanned {
  leases: number;
  /** The rate budget; Infinity where the scan's NULL says it does not bound. */
  budget: number;
}

async function scan(cases: Case[]): Promise<Scanned[]> {
  // One statement for every case: each row is an account as the scan sees it, closed `elapsed`
  // ms before now(); $3, $4 and $5 are the scan's own parameters, so cases are grouped by them.
  const groups = new Map<string, { prefetch: number; rampMs: number; ratePerS: number; at: number[] }>();
  cases.forEach((c, i) => {
    const key = `${c.prefetch}/${c.rampMs}/${c.ratePerS}`;
    const g = groups.get(key) ?? { prefetch: c.prefetch, rampMs: c.rampMs, ratePerS: c.ratePerS, at: [] };
    g.at.push(i);
    groups.set(key, g);
  });
  const out = new Array<Scanned>(cases.length);
  await withClient(requireEnv(ENV_ADMIN_URL), async (client) => {
    for (const g of groups.values()) {
      const rows = await client.query<{ i: number; leases: number; budget: number | null }>(
        `SELECT a.i, (${LEASES})::int AS leases, (${BUDGET})::int AS budget
         FROM (SELECT i, m AS max_in_flight, now() - e * interval '1 millisecond' AS circuit_closed_at
               FROM unnest($1::int[], $2::int[], $6::float8[]) AS t(i, m, e)) a
         CROSS JOIN LATERAL (SELECT ${SINCE_CLOSE_MS} AS ms) e
         ORDER BY a.i`,
        [g.at, g.at.map((i) => cases[i].maxInFlight), g.prefetch, g.rampMs, g.ratePerS, g.at.map((i) => cases[i].elapsed)],
      );
      for (const r of rows.rows) out[r.i] = { leases: r.leases, budget: r.budget ?? Infinity };
    }
  });
  return out;
}

const scanLeases = async (cases: Case[]) => (await scan(cases)).map((x) => x.leases);

/** The plan's answer, `elapsed + 1` ms after the close (the contract above). */
function planLeases(c: Case): number {
  const now = new Date(Date.UTC(2026, 11, 1, 12));
  const closedAt = c.elapsed === null ? null : new Date(now.getTime() - c.elapsed - 1);
  return leaseCapacity(c.maxInFlight, c.prefetch, closedAt, now, c.rampMs);
}

/** The plan's rate budget, `elapsed + 1` ms after the close. */
function planBudget(c: Case): number {
  const now = new Date(Date.UTC(2026, 11, 1, 12));
  const closedAt = c.elapsed === null ? null : new Date(now.getTime() - c.elapsed - 1);
  return slowStartBudget(closedAt, now, { rampMs: c.rampMs, ratePerS: c.ratePerS });
}

describe("slow start: the claim's SQL agrees with the plan", () => {
  it('at the edges of the ramp: no close, no ramp, a cap of 1, the close itself, a step, the last millisecond, after', async () => {
    const cases: Case[] = [];
    for (const maxInFlight of [1, 2, 5, 50])
      for (const prefetch of [1, 2])
        for (const rampMs of [0, 1, 1_000, 10_000])
          for (const elapsed of [
            null,
            -5_000,
            -2,
            -1,
            0,
            1,
            2,
            249,
            250,
            Math.floor(rampMs / 2) - 1,
            rampMs - 2,
            rampMs - 1,
            rampMs,
            rampMs + 1,
            10 * rampMs,
          ])
            cases.push({ maxInFlight, prefetch, rampMs, ratePerS: 0, elapsed });
    const scan = await scanLeases(cases);
    const wrong = cases.map((c, i) => ({ ...c, scan: scan[i], plan: planLeases(c) })).filter((c) => c.scan !== c.plan);
    expect(wrong).toEqual([]);
    // The table above ran the ramp, not only its ends: some cases are part-way up.
    expect(cases.some((c, i) => scan[i] > 1 && scan[i] < c.maxInFlight)).toBe(true);
  });

  it('for any cap, prefetch, ramp and time since the close', async () => {
    const arbitrary = fc.record({
      maxInFlight: fc.integer({ min: 1, max: 100 }),
      prefetch: fc.integer({ min: 1, max: 4 }),
      rampMs: fc.integer({ min: 0, max: 120_000 }),
      ratePerS: fc.constant(0),
      elapsed: fc.option(fc.integer({ min: -10_000, max: 200_000 }), { nil: null }),
    });
    const cases = fc.sample(arbitrary, { numRuns: 2_000, seed: 20261201 });
    const scan = await scanLeases(cases);
    const wrong = cases.map((c, i) => ({ ...c, scan: scan[i], plan: planLeases(c) })).filter((c) => c.scan !== c.plan);
    expect(wrong).toEqual([]);
    // Never fewer than the plan at the same instant, at most one step more.
    for (const [i, c] of cases.entries()) {
      const same = leaseCapacity(
        c.maxInFlight,
        c.prefetch,
        c.elapsed === null ? null : new Date(Date.UTC(2026, 11, 1, 12) - c.elapsed),
        new Date(Date.UTC(2026, 11, 1, 12)),
        c.rampMs,
      );
      expect(scan[i]).toBeGreaterThanOrEqual(same);
    }
  });

  it('the rate budget, at the edges: no close, no ramp, no rate, the close itself, a step, the last millisecond, after', async () => {
    const cases: Case[] = [];
    for (const ratePerS of [0, 1, 20, 1_000, 100_000])
      // 3,600,000: the longest ramp the configuration takes (4000 × it is past a 32-bit integer).
      for (const rampMs of [0, 1, 1_000, 10_000, 3_600_000])
        for (const elapsed of [null, -5_000, -1, 0, 1, 999, 1_000, 2_236, rampMs - 2, rampMs - 1, rampMs, rampMs + 1])
          cases.push({ maxInFlight: 5, prefetch: 2, rampMs, ratePerS, elapsed });
    const scanned = await scan(cases);
    const wrong = cases.map((c, i) => ({ ...c, scan: scanned[i].budget, plan: planBudget(c) })).filter((c) => c.scan !== c.plan);
    expect(wrong).toEqual([]);
    // Part-way up the ramp, not only its ends.
    expect(scanned.some((x) => x.budget > 1 && x.budget < 100)).toBe(true);
  });

  it('the rate budget, for any ramp, rate and time since the close; never below the plan at the same instant', async () => {
    const arbitrary = fc.record({
      maxInFlight: fc.constant(5),
      prefetch: fc.constant(2),
      rampMs: fc.integer({ min: 0, max: 120_000 }),
      ratePerS: fc.integer({ min: 0, max: 10_000 }),
      elapsed: fc.option(fc.integer({ min: -10_000, max: 200_000 }), { nil: null }),
    });
    const cases = fc.sample(arbitrary, { numRuns: 2_000, seed: 20261202 });
    const scanned = await scan(cases);
    const wrong = cases.map((c, i) => ({ ...c, scan: scanned[i].budget, plan: planBudget(c) })).filter((c) => c.scan !== c.plan);
    expect(wrong).toEqual([]);
    for (const [i, c] of cases.entries()) {
      const now = new Date(Date.UTC(2026, 11, 1, 12));
      const same = slowStartBudget(c.elapsed === null ? null : new Date(now.getTime() - c.elapsed), now, c);
      expect(scanned[i].budget).toBeGreaterThanOrEqual(same);
    }
  });
});
