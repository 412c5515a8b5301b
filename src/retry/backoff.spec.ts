import fc from 'fast-check';
import { backoffCeilingMs, backoffDelayMs, DEFAULT_RETRY_POLICY, fullJitterDelayMs } from './backoff';

/** mulberry32: a tiny deterministic PRNG so distribution tests never flake. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const { baseDelayMs: BASE, maxDelayMs: MAX } = DEFAULT_RETRY_POLICY;
const BELOW_ONE = 1 - Number.EPSILON / 2; // the largest double below 1

describe('DEFAULT_RETRY_POLICY', () => {
  it('has the documented defaults: base 2 s, max 1 h, 16 attempts, server waits up to 24 h', () => {
    expect(DEFAULT_RETRY_POLICY).toEqual({
      baseDelayMs: 2_000,
      maxDelayMs: 3_600_000,
      maxAttempts: 16,
      maxServerDelayMs: 86_400_000,
    });
  });
});

describe('backoffCeilingMs', () => {
  it.each([
    [1, 2_000],
    [2, 4_000],
    [3, 8_000],
    [5, 32_000],
    [11, 2_048_000],
    [12, 3_600_000], // 4_096_000 capped at 1 h
    [16, 3_600_000],
  ])('doubles from the base and caps at the maximum: attempt %i → %i ms', (attempt, ms) => {
    expect(backoffCeilingMs(attempt, BASE, MAX)).toBe(ms);
  });

  it.each([0, -1, -10, -(2 ** 31), Number.NEGATIVE_INFINITY, Number.NaN])('treats attempt %p as the first attempt', (attempt) => {
    expect(backoffCeilingMs(attempt, BASE, MAX)).toBe(BASE);
  });

  it('floors a fractional attempt', () => {
    expect(backoffCeilingMs(2.9, BASE, MAX)).toBe(4_000);
    expect(backoffCeilingMs(0.5, BASE, MAX)).toBe(2_000);
  });

  it.each([54, 1_000, 2 ** 31 - 1, 2 ** 31, 2 ** 31 + 10, 2 ** 53, Number.MAX_VALUE, Number.POSITIVE_INFINITY])(
    'saturates at the cap for the huge attempt %p',
    (attempt) => {
      expect(backoffCeilingMs(attempt, BASE, MAX)).toBe(MAX);
    },
  );

  it('saturates at MAX_SAFE_INTEGER when the cap is infinite', () => {
    expect(backoffCeilingMs(2 ** 31, BASE, Number.POSITIVE_INFINITY)).toBe(Number.MAX_SAFE_INTEGER);
    expect(backoffCeilingMs(2, Number.MAX_SAFE_INTEGER, Number.POSITIVE_INFINITY)).toBe(Number.MAX_SAFE_INTEGER);
    expect(backoffCeilingMs(1, Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY)).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('is exact right up to the largest power of two below MAX_SAFE_INTEGER', () => {
    const unlimited = Number.MAX_SAFE_INTEGER;
    expect(backoffCeilingMs(53, 1, unlimited)).toBe(2 ** 52);
    expect(backoffCeilingMs(54, 1, unlimited)).toBe(Number.MAX_SAFE_INTEGER);
    expect(backoffCeilingMs(43, 1_000, unlimited)).toBe(1_000 * 2 ** 42);
  });

  it('returns the cap when the base already exceeds it', () => {
    expect(backoffCeilingMs(1, 10_000, 5_000)).toBe(5_000);
  });

  it.each([
    [0, MAX],
    [BASE, 0],
    [-5, MAX],
    [BASE, -5],
    [Number.NaN, MAX],
    [BASE, Number.NaN],
    [Number.NEGATIVE_INFINITY, MAX],
  ])('returns 0 for the degenerate base %p / max %p', (base, max) => {
    expect(backoffCeilingMs(3, base, max)).toBe(0);
  });

  it('floors a fractional result', () => {
    expect(backoffCeilingMs(1, 1.5, 100)).toBe(1);
    expect(backoffCeilingMs(2, 1.5, 100)).toBe(3);
    expect(backoffCeilingMs(1, 10, 7.9)).toBe(7);
  });

  const anyAttempt = fc.oneof(fc.integer({ min: -10, max: 2 ** 31 + 10 }), fc.integer({ min: -10, max: 80 }), fc.double());
  const anyMs = fc.oneof(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), fc.integer({ min: 0, max: 100_000 }), fc.double());

  it('never exceeds the cap, is never negative and is always an integer', () => {
    fc.assert(
      fc.property(anyAttempt, anyMs, anyMs, (attempt, base, max) => {
        const ceiling = backoffCeilingMs(attempt, base, max);
        expect(Number.isSafeInteger(ceiling)).toBe(true);
        expect(ceiling).toBeGreaterThanOrEqual(0);
        if (max >= 0) expect(ceiling).toBeLessThanOrEqual(max);
      }),
      { numRuns: 2_000 },
    );
  });

  it('equals min(max, base × 2^(attempt−1)) computed with BigInt', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
        fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
        (attempt, base, max) => {
          const exact = BigInt(base) << BigInt(attempt - 1);
          const expected = exact < BigInt(max) ? exact : BigInt(max);
          expect(BigInt(backoffCeilingMs(attempt, base, max))).toBe(expected);
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it('never decreases as attempts grow', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -10, max: 2 ** 31 + 10 }),
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 0, max: 1e12 }),
        fc.integer({ min: 0, max: 1e15 }),
        (attempt, step, base, max) => {
          expect(backoffCeilingMs(attempt + step, base, max)).toBeGreaterThanOrEqual(backoffCeilingMs(attempt, base, max));
        },
      ),
    );
  });
});

describe('fullJitterDelayMs', () => {
  const policy = { baseDelayMs: BASE, maxDelayMs: MAX };

  it('draws 0 when random gives 0', () => {
    expect(fullJitterDelayMs(5, policy, () => 0)).toBe(0);
  });

  it('can reach the ceiling itself (the window is inclusive)', () => {
    expect(fullJitterDelayMs(5, policy, () => BELOW_ONE)).toBe(32_000);
    expect(fullJitterDelayMs(2 ** 31, policy, () => BELOW_ONE)).toBe(MAX);
  });

  it('is floor(random × (ceiling + 1))', () => {
    expect(fullJitterDelayMs(1, policy, () => 0.5)).toBe(1_000);
    expect(fullJitterDelayMs(1, policy, () => 0.25)).toBe(500);
  });

  it('draws 0 and 1 both when the ceiling is 1', () => {
    const tiny = { baseDelayMs: 1, maxDelayMs: 1 };
    expect(fullJitterDelayMs(1, tiny, () => 0.49)).toBe(0);
    expect(fullJitterDelayMs(1, tiny, () => 0.5)).toBe(1);
  });

  it('is always 0 when the ceiling is 0', () => {
    expect(fullJitterDelayMs(3, { baseDelayMs: 0, maxDelayMs: MAX }, () => 0.9)).toBe(0);
  });

  it.each([
    [1, 32_000],
    [1.5, 32_000],
    [Number.POSITIVE_INFINITY, 32_000],
    [-0.2, 0],
    [Number.NEGATIVE_INFINITY, 0],
    [Number.NaN, 0],
  ])('clamps the out-of-contract random value %p into the window', (r, expected) => {
    expect(fullJitterDelayMs(5, policy, () => r)).toBe(expected);
  });

  it('calls random exactly once per draw', () => {
    const random = jest.fn(() => 0.3);
    fullJitterDelayMs(4, policy, random);
    expect(random).toHaveBeenCalledTimes(1);
  });

  it('spreads draws over the whole window rather than clustering', () => {
    const random = seededRandom(20_250_601);
    const attempt = 5; // ceiling 32 s
    const ceiling = backoffCeilingMs(attempt, BASE, MAX);
    const draws = Array.from({ length: 20_000 }, () => fullJitterDelayMs(attempt, policy, random));

    const deciles = new Array<number>(10).fill(0);
    for (const d of draws) deciles[Math.min(9, Math.floor((d / (ceiling + 1)) * 10))] += 1;
    for (const count of deciles) {
      // 2000 expected per decile; ±15% is > 10 standard deviations of a uniform draw.
      expect(count).toBeGreaterThan(1_700);
      expect(count).toBeLessThan(2_300);
    }
    expect(Math.min(...draws)).toBeLessThan(ceiling * 0.001);
    expect(Math.max(...draws)).toBeGreaterThan(ceiling * 0.999);
    const mean = draws.reduce((a, b) => a + b, 0) / draws.length;
    expect(Math.abs(mean - ceiling / 2)).toBeLessThan(ceiling * 0.02);
  });

  it('stays an integer within [0, ceiling] for any attempt, policy and random value', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.integer({ min: -10, max: 2 ** 31 + 10 }), fc.double()),
        fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
        fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
        fc.oneof(fc.double({ min: 0, max: 1, maxExcluded: true }), fc.double()),
        (attempt, baseDelayMs, maxDelayMs, r) => {
          const delay = fullJitterDelayMs(attempt, { baseDelayMs, maxDelayMs }, () => r);
          expect(Number.isSafeInteger(delay)).toBe(true);
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay).toBeLessThanOrEqual(backoffCeilingMs(attempt, baseDelayMs, maxDelayMs));
        },
      ),
      { numRuns: 2_000 },
    );
  });
});

describe('backoffDelayMs', () => {
  const policy = { baseDelayMs: 1000, maxDelayMs: 60_000 };
  it('draws with full jitter by default and when asked', () => {
    expect(backoffDelayMs(3, policy, () => 0.25)).toBe(1000);
    expect(backoffDelayMs(3, { ...policy, jitter: 'full' }, () => 0.25)).toBe(1000);
  });
  it('waits the ceiling itself without jitter, whatever the random source says', () => {
    expect(backoffDelayMs(3, { ...policy, jitter: 'none' }, () => 0.25)).toBe(4000);
    expect(backoffDelayMs(30, { ...policy, jitter: 'none' }, () => 0)).toBe(60_000);
  });
});
