import { gate } from '../retry/circuit-breaker';
import type { AccountSlot, Candidate, ClaimPlan, SlowStart } from '../queue/queue.types';
import { leaseCapacity, NO_SLOW_START, slowStartBudget, slowStartNextAt } from './slow-start';

/**
 * Which of the due candidates to start, given each account's in-flight attempts and circuit
 * (docs/delivery.md "the circuit breaker"):
 * - closed circuit: up to maxInFlight × prefetch − inFlight jobs; while the account's slow start
 *   runs (its circuit closed less than `slowStart.rampMs` ago, slow-start.ts) up to its ramped
 *   cap − inFlight, without prefetch, so no more than the ramped cap of its attempts run at once,
 *   and no more than its rate budget − the jobs it leased since the close;
 * - open circuit past its cooldown: exactly one job, the probe (the caller moves the circuit
 *   to half_open in the same transaction, under the account's row lock, so exactly one
 *   probe goes out whatever the number of workers);
 * - open within its cooldown, or half-open with a probe out: none (deferred, no attempt spent);
 * - capped at `limit` jobs in all.
 * Candidates not taken stay scheduled, untouched. `slowStartLeased` says how many jobs each
 * ramping account takes (the caller adds them to its count, under the same lock), `wakeAt` the
 * earliest moment a ramping account's budget grows (the caller claims again then).
 */
export function planClaim(
  candidates: Candidate[],
  accounts: Map<string, AccountSlot>,
  now: Date,
  limit: number,
  slowStart: SlowStart = NO_SLOW_START,
): ClaimPlan {
  const budget = new Map<string, number>();
  const probes: string[] = [];
  const pacing = new Map<string, AccountSlot>();
  for (const a of accounts.values()) {
    const g = gate(a.circuit, now);
    if (g === 'allow') {
      const capacity = a.prefetch > 0 ? leaseCapacity(a.maxInFlight, a.prefetch, a.closedAt, now, slowStart.rampMs) : 0;
      const rate = slowStartBudget(a.closedAt, now, slowStart);
      if (rate !== Infinity) pacing.set(a.id, a);
      budget.set(a.id, Math.max(0, Math.min(capacity - a.inFlight, rate - a.slowStartLeased)));
    } else if (g === 'probe') {
      budget.set(a.id, 1);
      probes.push(a.id);
    } else budget.set(a.id, 0);
  }
  const take: string[] = [];
  const probing = new Set(probes);
  const probesUsed = new Set<string>();
  const slowStartLeased = new Map<string, number>();
  for (const c of candidates) {
    if (take.length >= limit) break;
    const left = budget.get(c.accountId) ?? 0;
    if (left <= 0) continue;
    budget.set(c.accountId, left - 1);
    take.push(c.id);
    if (probing.has(c.accountId)) probesUsed.add(c.accountId);
    if (pacing.has(c.accountId)) slowStartLeased.set(c.accountId, (slowStartLeased.get(c.accountId) ?? 0) + 1);
  }
  // Every ramping account the round saw: its next step, whether or not it had work this time
  // (the scan leaves out an account whose budget is spent, so its next step is set here).
  let wakeAt: Date | null = null;
  for (const a of pacing.values()) {
    const next = slowStartNextAt(a.closedAt, a.slowStartLeased + (slowStartLeased.get(a.id) ?? 0), slowStart);
    if (next !== null && next > now && (wakeAt === null || next < wakeAt)) wakeAt = next;
  }
  return { take, probes: probes.filter((p) => probesUsed.has(p)), slowStartLeased, wakeAt };
}
