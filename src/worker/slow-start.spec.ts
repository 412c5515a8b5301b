import fc from 'fast-check';
import { leaseCapacity, slowStartCap } from './slow-start';

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
