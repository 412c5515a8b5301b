import fc from 'fast-check';
import { leaseCapacity, slowStartBudget, slowStartCap, slowStartNextAt } from './slow-start';

const closed = new Date('2026-12-01T12:00:00Z');
const after = (ms: number) => new Date(closed.getTime() + ms);
const cap = fc.integer({ min: 1, max: 1000 });
const ramp = fc.integer({ min: 0, max: 3_600_000 });
const t = fc.integer({ min: -3_600_000, max: 7_200_000 });

describe('slowStartCap', () => {
  it('ramps linearly from 1 at the close to the cap at the end of the ramp', () => {
    expect([0, 1, 2_499, 2_500, 5_000, 7_500, 9_999, 10_000, 60_000].map((ms) => slowStartCap(5, closed, after(ms), 10_000))).toEqual([
      1, 1, 1, 2, 3, 4, 4, 5, 5,
    ]);
  });

  it('gives the full cap when no close is recorded, or the slow start is off', () => {
    expect(slowStartCap(5, null, after(0), 10_000)).toBe(5);
    expect(slowStartCap(5, closed, after(0), 0)).toBe(5);
  });

  it('gives 1 for a now before the close (rounding between two reads of one clock)', () => {
    expect(slowStartCap(8, closed, after(-500), 10_000)).toBe(1);
  });

  it('is monotone non-decreasing in time', () => {
    fc.assert(
      fc.property(cap, ramp, t, t, (c, r, a, b) => {
        const [early, late] = a <= b ? [a, b] : [b, a];
        expect(slowStartCap(c, closed, after(early), r)).toBeLessThanOrEqual(slowStartCap(c, closed, after(late), r));
      }),
    );
  });

  it('is never above the cap and never below 1', () => {
    fc.assert(
      fc.property(cap, ramp, t, (c, r, ms) => {
        const x = slowStartCap(c, closed, after(ms), r);
        expect(Number.isInteger(x)).toBe(true);
        expect(x).toBeGreaterThanOrEqual(1);
        expect(x).toBeLessThanOrEqual(c);
      }),
    );
  });

  it('equals the cap once the ramp is over', () => {
    fc.assert(
      fc.property(cap, ramp, fc.integer({ min: 0, max: 3_600_000 }), (c, r, extra) => {
        expect(slowStartCap(c, closed, after(r + extra), r)).toBe(c);
      }),
    );
  });
});

describe('leaseCapacity', () => {
  it('leases the ramped cap during the ramp (no prefetch), the cap × prefetch after it', () => {
    expect(leaseCapacity(5, 2, closed, after(0), 10_000)).toBe(1);
    expect(leaseCapacity(5, 2, closed, after(9_999), 10_000)).toBe(4);
    expect(leaseCapacity(5, 2, closed, after(10_000), 10_000)).toBe(10);
    expect(leaseCapacity(5, 2, null, after(0), 10_000)).toBe(10);
  });

  it('never lets more than the ramped cap run during the ramp', () => {
    fc.assert(
      fc.property(cap, fc.integer({ min: 1, max: 4 }), ramp, t, (c, prefetch, r, ms) => {
        const ramped = slowStartCap(c, closed, after(ms), r);
        const leases = leaseCapacity(c, prefetch, closed, after(ms), r);
        if (ramped < c) expect(leases).toBe(ramped);
        else expect(leases).toBe(c * prefetch);
      }),
    );
  });
});

describe('slowStartBudget (the rate ramp)', () => {
  const defaults = { rampMs: 10_000, ratePerS: 20 };
  const settings = fc.record({ rampMs: fc.integer({ min: 1, max: 3_600_000 }), ratePerS: fc.integer({ min: 1, max: 100_000 }) });

  it('allows 1 at the close, then the area under a rate rising from 10/s to 20/s over 10 s', () => {
    // 1 + floor(20 × t × (20 000 + t) / 40 000 000), t in ms: 100 ms → 2, 1 s → 11, 5 s → 63.
    expect([0, 1, 99, 100, 1_000, 2_000, 5_000, 9_999].map((ms) => slowStartBudget(closed, after(ms), defaults))).toEqual([
      1, 1, 1, 2, 11, 23, 63, 150,
    ]);
    expect(slowStartBudget(closed, after(10_000), defaults)).toBe(Infinity);
  });

  it('does not bound an account with no close recorded, the ramp off, or the rate 0', () => {
    expect(slowStartBudget(null, after(0), defaults)).toBe(Infinity);
    expect(slowStartBudget(closed, after(0), { rampMs: 0, ratePerS: 20 })).toBe(Infinity);
    expect(slowStartBudget(closed, after(0), { rampMs: 10_000, ratePerS: 0 })).toBe(Infinity);
  });

  it('gives 1 for a now before the close', () => {
    expect(slowStartBudget(closed, after(-250), defaults)).toBe(1);
  });

  it('is monotone non-decreasing in time, and at least 1', () => {
    fc.assert(
      fc.property(settings, t, t, (s, a, b) => {
        const [early, late] = a <= b ? [a, b] : [b, a];
        const x = slowStartBudget(closed, after(early), s);
        expect(x).toBeGreaterThanOrEqual(1);
        expect(x).toBeLessThanOrEqual(slowStartBudget(closed, after(late), s));
      }),
    );
  });

  it('allows in the first t ms what a rate rising linearly from ratePerS / 2 to ratePerS sends, plus the one at the close', () => {
    fc.assert(
      fc.property(settings, fc.integer({ min: 0, max: 3_600_000 }), (s, ms) => {
        fc.pre(ms < s.rampMs);
        const t = ms / 1000;
        const area = s.ratePerS * (t / 2 + (t * t) / (4 * (s.rampMs / 1000)));
        const x = slowStartBudget(closed, after(ms), s);
        expect(x).toBeLessThanOrEqual(1 + area + 1e-6);
        expect(x).toBeGreaterThan(area - 1e-6);
      }),
    );
  });
});

describe('slowStartNextAt', () => {
  const defaults = { rampMs: 10_000, ratePerS: 20 };

  it('is the first millisecond at which the budget passes what was leased', () => {
    // 1 leased at the close: the second at t with 20 t (20 000 + t) / 40 000 000 ≥ 1, t = 100 ms.
    expect(slowStartNextAt(closed, 1, defaults)).toEqual(after(100));
    expect(slowStartNextAt(closed, 0, defaults)).toEqual(closed);
    // 100 leased: the 101st at 7,321 ms; 150: the 151st would need the ramp's end, when the budget no longer applies.
    expect(slowStartNextAt(closed, 100, defaults)).toEqual(after(7_321));
    expect(slowStartNextAt(closed, 150, defaults)).toEqual(after(10_000));
    expect(slowStartNextAt(closed, 10_000, defaults)).toEqual(after(10_000));
  });

  it('is null when no ramp runs', () => {
    expect(slowStartNextAt(null, 3, defaults)).toBeNull();
    expect(slowStartNextAt(closed, 3, { rampMs: 0, ratePerS: 20 })).toBeNull();
    expect(slowStartNextAt(closed, 3, { rampMs: 10_000, ratePerS: 0 })).toBeNull();
  });

  it('agrees with the budget: not allowed a millisecond before, allowed at it', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 600_000 }),
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 100_000 }),
        (rampMs, ratePerS, leased) => {
          const s = { rampMs, ratePerS };
          const at = slowStartNextAt(closed, leased, s)!;
          const ms = at.getTime() - closed.getTime();
          expect(ms).toBeGreaterThanOrEqual(0);
          expect(ms).toBeLessThanOrEqual(rampMs);
          expect(slowStartBudget(closed, at, s)).toBeGreaterThan(leased);
          if (ms > 0) expect(slowStartBudget(closed, after(ms - 1), s)).toBeLessThanOrEqual(leased);
        },
      ),
    );
  });
});
