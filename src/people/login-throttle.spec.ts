import fc from 'fast-check';
import {
  blockAfter,
  checkThrottle,
  FIRST_BLOCK_MS,
  FREE_FAILURES,
  MAX_BLOCK_MS,
  recordFailure,
  ThrottleState,
  WINDOW_MS,
} from './login-throttle';
import { ThrottleRead } from './login-throttle.repository';
import { sql } from '../database/statement';

const t0 = new Date('2026-12-01T09:00:00Z');
const at = (ms: number) => new Date(t0.getTime() + ms);

describe('login throttle', () => {
  it('lets the first three wrong keys through without a wait', () => {
    let s: ThrottleState | null = null;
    for (let i = 0; i < FREE_FAILURES; i++) {
      s = recordFailure(s, t0);
      expect(checkThrottle(s, t0)).toEqual({ allowed: true });
    }
  });

  it('blocks the try after the fourth wrong key for 1 s, then doubles up to a minute', () => {
    expect([4, 5, 6, 7, 8, 9, 10, 11, 50].map(blockAfter)).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000]);
  });

  it('refuses while blocked and says how long to wait', () => {
    let s: ThrottleState | null = null;
    for (let i = 0; i < FREE_FAILURES + 2; i++) s = recordFailure(s, t0);
    expect(checkThrottle(s, at(500))).toEqual({ allowed: false, retryAfterMs: 1_500 });
    expect(checkThrottle(s, at(2_000))).toEqual({ allowed: true });
  });

  it('starts counting again after a quiet window', () => {
    let s: ThrottleState | null = null;
    for (let i = 0; i < 8; i++) s = recordFailure(s, t0);
    expect(recordFailure(s, at(WINDOW_MS + 1)).failures).toBe(1);
    expect(recordFailure(s, at(WINDOW_MS)).failures).toBe(9);
  });

  it('never blocks longer than the maximum nor for a negative time, whatever the count', () => {
    fc.assert(
      fc.property(fc.integer({ min: -10, max: Number.MAX_SAFE_INTEGER }), (n) => {
        const ms = blockAfter(n);
        return ms >= 0 && ms <= MAX_BLOCK_MS && (n <= FREE_FAILURES ? ms === 0 : ms >= FIRST_BLOCK_MS);
      }),
    );
  });

  it('grows monotonically with the count', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 1_000 }), (n) => blockAfter(n + 1) >= blockAfter(n)));
  });

  it('a burst of wrong keys at one instant is refused after the free ones', () => {
    fc.assert(
      fc.property(fc.integer({ min: FREE_FAILURES + 1, max: 40 }), (n) => {
        let s: ThrottleState | null = null;
        for (let i = 0; i < n; i++) s = recordFailure(s, t0);
        return !checkThrottle(s, t0).allowed;
      }),
    );
  });
});

describe('the counts as a carrying statement reads them (ThrottleRead)', () => {
  it('reads each count with its times as Dates, and no row as no count', () => {
    const read = new ThrottleRead(sql`(SELECT 1)`);
    expect(read.states).toBeNull();
    read.take([
      { key: '10.0.0.1', failures: 4, lastFailureAt: t0.getTime(), blockedUntil: t0.getTime() + FIRST_BLOCK_MS },
      { key: 'address:ab', failures: 1, lastFailureAt: null, blockedUntil: null },
    ]);
    expect(read.states).toEqual(
      new Map([
        ['10.0.0.1', { failures: 4, lastFailureAt: t0, blockedUntil: at(FIRST_BLOCK_MS) }],
        ['address:ab', { failures: 1, lastFailureAt: null, blockedUntil: null }],
      ]),
    );
    read.take([]);
    expect(read.states).toEqual(new Map());
  });

  it('blocks as the row read would: the state read back decides the same', () => {
    const state = recordFailure(recordFailure(recordFailure(recordFailure(null, t0), t0), t0), t0);
    const read = new ThrottleRead(sql`(SELECT 1)`);
    read.take([
      { key: 'c', failures: state.failures, lastFailureAt: state.lastFailureAt!.getTime(), blockedUntil: state.blockedUntil!.getTime() },
    ]);
    expect(checkThrottle(read.states!.get('c')!, t0)).toEqual(checkThrottle(state, t0));
  });
});
