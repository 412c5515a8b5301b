import fc from 'fast-check';
import { IDLE_PASS_MS, nextPollMs, nextSweepAt } from './sweep-plan';

const MINUTE = 60_000;
const at = (iso: string) => Date.parse(iso);

describe('nextSweepAt', () => {
  it('keeps a 60 s sweep at second 0 of every minute, whenever its timer fires', () => {
    const planned = at('2026-12-06T09:00:00.000Z');
    expect(nextSweepAt(planned, MINUTE, at('2026-12-06T09:00:00.004Z'))).toBe(at('2026-12-06T09:01:00.000Z'));
    // Fired a millisecond early: the next is still the following minute, not this one again.
    expect(nextSweepAt(planned, MINUTE, at('2026-12-06T08:59:59.999Z'))).toBe(at('2026-12-06T09:01:00.000Z'));
    // Fired 40 s late (a busy event loop): the next minute, not 60 s after the late run.
    expect(nextSweepAt(planned, MINUTE, at('2026-12-06T09:00:40.000Z'))).toBe(at('2026-12-06T09:01:00.000Z'));
  });

  it('after a frozen process, plans the next boundary from now instead of a burst of missed ones', () => {
    const planned = at('2026-12-06T09:00:00.000Z');
    expect(nextSweepAt(planned, MINUTE, at('2026-12-06T09:07:30.000Z'))).toBe(at('2026-12-06T09:08:00.000Z'));
    expect(nextSweepAt(planned, MINUTE, at('2026-12-06T09:01:00.000Z'))).toBe(at('2026-12-06T09:02:00.000Z'));
  });

  it('for any interval dividing 60 s and any firing time: the next sweep is after now, on a boundary, at most one interval away', () => {
    const intervals = [1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60].map((s) => s * 1000);
    fc.assert(
      fc.property(
        fc.constantFrom(...intervals),
        fc.integer({ min: 0, max: 2 ** 40 }),
        fc.integer({ min: -50, max: 10 * MINUTE }),
        (interval, k, drift) => {
          const planned = Math.floor(k / interval) * interval;
          const now = planned + drift;
          const next = nextSweepAt(planned, interval, now);
          expect(next % interval).toBe(0);
          expect(next % MINUTE === 0 || interval < MINUTE).toBe(true);
          expect(next).toBeGreaterThan(now);
          expect(next).toBeGreaterThan(planned);
          expect(next - now).toBeLessThanOrEqual(interval + 50);
        },
      ),
    );
  });
});

describe('nextPollMs', () => {
  it('waits for a NOTIFY or the next mail due while listening', () => {
    expect(nextPollMs(true, null, 2000)).toBe(IDLE_PASS_MS);
    expect(nextPollMs(true, 45_000, 2000)).toBe(45_000);
    expect(nextPollMs(true, 10 * IDLE_PASS_MS, 2000)).toBe(IDLE_PASS_MS);
  });

  it('polls without a LISTEN connection, and never loops on a mail due now', () => {
    expect(nextPollMs(false, null, 2000)).toBe(2000);
    expect(nextPollMs(false, 45_000, 2000)).toBe(2000);
    expect(nextPollMs(true, 0, 2000)).toBe(2000);
  });
});
