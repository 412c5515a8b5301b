import { gate } from '../retry/circuit-breaker';
import type { AccountSlot, Candidate, ClaimPlan } from '../queue/queue.types';
import { leaseCapacity } from './slow-start';

/**
 * Which of the due candidates to start, given each account's in-flight attempts and circuit
 * (docs/delivery.md "the circuit breaker"):
 * - closed circuit: up to maxInFlight × prefetch − inFlight jobs; while the account's slow start
 *   runs (its circuit closed less than `slowStartMs` ago, slow-start.ts) up to its ramped cap −
 *   inFlight, without prefetch, so no more than the ramped cap of its attempts run at once;
 * - open circuit past its cooldown: exactly one job, the probe (the caller moves the circuit
 *   to half_open in the same transaction, under the account's row lock, so exactly one
 *   probe goes out whatever the number of workers);
 * - open within its cooldown, or half-open with a probe out: none (deferred, no attempt spent);
 * - capped at `limit` jobs in all.
 * Candidates not taken stay scheduled, untouched.
 */
export function planClaim(
  candidates: Candidate[],
  accounts: Map<string, AccountSlot>,
  now: Date,
  limit: number,
  slowStartMs = 0,
): ClaimPlan {
  const budget = new Map<string, number>();
  const probes: string[] = [];
  for (const a of accounts.values()) {
    const g = gate(a.circuit, now);
    if (g === 'allow') {
      const capacity = a.prefetch > 0 ? leaseCapacity(a.maxInFlight, a.prefetch, a.closedAt, now, slowStartMs) : 0;
      budget.set(a.id, Math.max(0, capacity - a.inFlight));
    } else if (g === 'probe') {
      budget.set(a.id, 1);
      probes.push(a.id);
    } else budget.set(a.id, 0);
  }
  const take: string[] = [];
  const probing = new Set(probes);
  const probesUsed = new Set<string>();
  for (const c of candidates) {
    if (take.length >= limit) break;
    const left = budget.get(c.accountId) ?? 0;
    if (left <= 0) continue;
    budget.set(c.accountId, left - 1);
    take.push(c.id);
    if (probing.has(c.accountId)) probesUsed.add(c.accountId);
  }
  return { take, probes: probes.filter((p) => probesUsed.has(p)) };
}
