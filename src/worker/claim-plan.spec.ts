import { CLOSED_CIRCUIT } from '../retry/circuit-breaker';
import type { AccountSlot, Candidate } from '../queue/queue.types';
import { planClaim } from './claim-plan';

const now = new Date('2026-11-29T12:00:00Z');
const slot = (id: string, over: Partial<AccountSlot> = {}): AccountSlot => ({
  id,
  maxInFlight: 5,
  prefetch: 1,
  inFlight: 0,
  circuit: CLOSED_CIRCUIT,
  closedAt: null,
  slowStartLeased: 0,
  ...over,
});
const jobs = (accountId: string, n: number, from = 0): Candidate[] =>
  Array.from({ length: n }, (_, i) => ({ id: `${accountId}-${from + i}`, accountId }));

describe('planClaim', () => {
  it('takes at most maxInFlight − inFlight jobs per account, in order', () => {
    const accounts = new Map([
      ['a', slot('a', { inFlight: 2 })],
      ['b', slot('b')],
    ]);
    const plan = planClaim([...jobs('a', 10), ...jobs('b', 2)], accounts, now, 100);
    expect(plan.take).toEqual(['a-0', 'a-1', 'a-2', 'b-0', 'b-1']);
    expect(plan.probes).toEqual([]);
  });

  it('does not let one busy account starve the others in the same batch', () => {
    const accounts = new Map([
      ['a', slot('a')],
      ['b', slot('b')],
    ]);
    const plan = planClaim([...jobs('a', 50), ...jobs('b', 3)], accounts, now, 100);
    expect(plan.take.filter((id) => id.startsWith('b'))).toHaveLength(3);
  });

  it('respects the batch limit', () => {
    const accounts = new Map([['a', slot('a', { maxInFlight: 100 })]]);
    expect(planClaim(jobs('a', 50), accounts, now, 7).take).toHaveLength(7);
  });

  it('defers every job of an account whose circuit is open', () => {
    const open = { state: 'open' as const, openUntil: new Date(now.getTime() + 10_000), consecutiveFailures: 5 };
    const plan = planClaim(jobs('a', 3), new Map([['a', slot('a', { circuit: open })]]), now, 100);
    expect(plan).toEqual({ take: [], probes: [], slowStartLeased: new Map(), wakeAt: null });
  });

  it('takes exactly one probe once the cooldown is over', () => {
    const cooled = { state: 'open' as const, openUntil: new Date(now.getTime() - 1), consecutiveFailures: 5 };
    const plan = planClaim(jobs('a', 3), new Map([['a', slot('a', { circuit: cooled })]]), now, 100);
    expect(plan).toEqual({ take: ['a-0'], probes: ['a'], slowStartLeased: new Map(), wakeAt: null });
  });

  it('sends nothing while a probe is out (half-open)', () => {
    const half = { state: 'half_open' as const, openUntil: new Date(now.getTime() + 60_000), consecutiveFailures: 5 };
    expect(planClaim(jobs('a', 3), new Map([['a', slot('a', { circuit: half })]]), now, 100).take).toEqual([]);
  });

  it('reports no probe when the batch limit left no room for it', () => {
    const cooled = { state: 'open' as const, openUntil: new Date(now.getTime() - 1), consecutiveFailures: 5 };
    const accounts = new Map([
      ['b', slot('b')],
      ['a', slot('a', { circuit: cooled })],
    ]);
    const plan = planClaim([...jobs('b', 2), ...jobs('a', 1)], accounts, now, 2);
    expect(plan).toEqual({ take: ['b-0', 'b-1'], probes: [], slowStartLeased: new Map(), wakeAt: null });
  });

  it('leases maxInFlight × prefetch, none while another process holds leases on the account', () => {
    const accounts = new Map([
      ['a', slot('a', { prefetch: 2, inFlight: 3 })],
      ['b', slot('b', { prefetch: 0 })],
    ]);
    const plan = planClaim([...jobs('a', 20), ...jobs('b', 5)], accounts, now, 100);
    expect(plan.take).toEqual(['a-0', 'a-1', 'a-2', 'a-3', 'a-4', 'a-5', 'a-6']);
  });

  it('holds an account whose circuit just closed to its ramped cap, without prefetch, then to the full cap × prefetch', () => {
    const ramp = 10_000;
    const at = (msAfterClose: number, inFlight = 0) =>
      planClaim(
        jobs('a', 50),
        new Map([['a', slot('a', { maxInFlight: 5, prefetch: 2, inFlight, closedAt: new Date(now.getTime() - msAfterClose) })]]),
        now,
        100,
        { rampMs: ramp, ratePerS: 0 },
      ).take.length;
    expect(at(0)).toBe(1);
    expect(at(0, 1)).toBe(0); // the first attempt still runs: nothing more
    expect(at(2_500)).toBe(2);
    expect(at(5_000)).toBe(3);
    expect(at(9_999)).toBe(4);
    expect(at(10_000)).toBe(10);
    expect(at(60_000, 4)).toBe(6);
    // Turned off (WORKER_SLOW_START_MS=0): the full cap at once.
    const off = planClaim(jobs('a', 50), new Map([['a', slot('a', { prefetch: 2, closedAt: now })]]), now, 100, {
      rampMs: 0,
      ratePerS: 20,
    });
    expect(off.take).toHaveLength(10);
  });

  it('paces an account in its slow start by its rate budget, across rounds, and says when the budget grows', () => {
    const s = { rampMs: 10_000, ratePerS: 20 };
    const closedAt = new Date(now.getTime() - 2_000); // budget 23 two seconds in
    const at = (leased: number, inFlight = 0) =>
      planClaim(
        jobs('a', 50),
        new Map([['a', slot('a', { maxInFlight: 50, prefetch: 2, inFlight, closedAt, slowStartLeased: leased })]]),
        now,
        100,
        s,
      );
    // The in-flight ramp alone would allow 1 + floor(49 × 0.2) = 10; the budget left, 23 − 20 = 3.
    const paced = at(20);
    expect(paced.take).toHaveLength(3);
    expect(paced.slowStartLeased).toEqual(new Map([['a', 3]]));
    // 23 leased: the 24th when 20 t (20 000 + t) / 40 000 000 ≥ 23, t = 2,084 ms after the close.
    expect(paced.wakeAt).toEqual(new Date(closedAt.getTime() + 2_084));
    // Spent: nothing now, the same moment to come back.
    const spent = at(23);
    expect(spent.take).toEqual([]);
    expect(spent.wakeAt).toEqual(new Date(closedAt.getTime() + 2_084));
    // The in-flight cap binds where it is lower.
    expect(at(0, 8).take).toHaveLength(2);
  });

  it('does not pace, count or wake for accounts whose ramp is over or never started', () => {
    const s = { rampMs: 10_000, ratePerS: 20 };
    const accounts = new Map([
      ['a', slot('a', { prefetch: 2, closedAt: new Date(now.getTime() - 60_000), slowStartLeased: 500 })],
      ['b', slot('b', { prefetch: 2 })],
    ]);
    const plan = planClaim([...jobs('a', 20), ...jobs('b', 20)], accounts, now, 100, s);
    expect(plan.take).toHaveLength(20);
    expect(plan.slowStartLeased.size).toBe(0);
    expect(plan.wakeAt).toBeNull();
  });

  it('ignores candidates of accounts it was not told about', () => {
    expect(planClaim(jobs('x', 2), new Map(), now, 10).take).toEqual([]);
  });
});
