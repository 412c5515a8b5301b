import fc from 'fast-check';
import { backoffCeilingMs, DEFAULT_RETRY_POLICY, RetryPolicy } from './backoff';
import { decideAfterAttempt, DecisionInput, isExpired, RetryDecision } from './decide';
import { ErrorClass } from './error-class';
import { MAX_DATE_MS } from './instant';

const NOW = new Date(Date.UTC(2025, 5, 1, 12, 0, 0));
const BELOW_ONE = 1 - Number.EPSILON / 2;

function at(offsetMs: number): Date {
  return new Date(NOW.getTime() + offsetMs);
}

/** A transient failure of the first attempt, no server wait, no deadline, mid-window jitter. */
function decisionInput(overrides: Partial<DecisionInput> = {}): DecisionInput {
  return {
    errorClass: 'transient',
    attemptNumber: 1,
    policy: DEFAULT_RETRY_POLICY,
    serverDelayMs: null,
    publishBy: null,
    now: NOW,
    random: () => 0.5,
    ...overrides,
  };
}

function retryAfter(delayMs: number): RetryDecision {
  return { decision: 'retry', retryAt: at(delayMs), deadReason: null, delayMs };
}

describe('decideAfterAttempt', () => {
  describe('non-transient outcomes', () => {
    it('succeeds on success', () => {
      expect(decideAfterAttempt(decisionInput({ errorClass: 'success' }))).toEqual({
        decision: 'succeed',
        retryAt: null,
        deadReason: null,
        delayMs: null,
      });
    });

    it('pauses on auth instead of spending attempts on rejected credentials', () => {
      expect(decideAfterAttempt(decisionInput({ errorClass: 'auth', attemptNumber: 16 }))).toEqual({
        decision: 'pause',
        retryAt: null,
        deadReason: null,
        delayMs: null,
      });
    });

    it('kills a permanent failure at once, on the first attempt', () => {
      expect(decideAfterAttempt(decisionInput({ errorClass: 'permanent' }))).toEqual({
        decision: 'dead',
        retryAt: null,
        deadReason: 'permanent',
        delayMs: null,
      });
    });

    it('kills a poison payload at once', () => {
      expect(decideAfterAttempt(decisionInput({ errorClass: 'poison' }))).toEqual({
        decision: 'dead',
        retryAt: null,
        deadReason: 'poison',
        delayMs: null,
      });
    });

    it('reports a permanent failure as permanent even past publishBy', () => {
      const d = decideAfterAttempt(decisionInput({ errorClass: 'permanent', publishBy: at(-1_000) }));
      expect(d.deadReason).toBe('permanent');
    });

    it('records a success that finished after publishBy as a success', () => {
      expect(decideAfterAttempt(decisionInput({ errorClass: 'success', publishBy: at(-1_000) })).decision).toBe('succeed');
    });

    it('does not consume random draws for non-transient outcomes', () => {
      const random = jest.fn(() => 0.5);
      for (const errorClass of ['success', 'auth', 'permanent', 'poison'] as const) {
        decideAfterAttempt(decisionInput({ errorClass, random }));
      }
      expect(random).not.toHaveBeenCalled();
    });
  });

  describe('transient failures', () => {
    it('retries after the full-jitter backoff of the attempt that failed', () => {
      // attempt 3: ceiling 8 s; floor(0.5 × 8001) = 4000
      expect(decideAfterAttempt(decisionInput({ attemptNumber: 3 }))).toEqual(retryAfter(4_000));
    });

    it('may retry immediately when the jitter draws 0', () => {
      expect(decideAfterAttempt(decisionInput({ random: () => 0 }))).toEqual(retryAfter(0));
    });

    it('retries on the attempt before the last', () => {
      expect(decideAfterAttempt(decisionInput({ attemptNumber: 15 })).decision).toBe('retry');
    });

    it('is dead with max_attempts once the last allowed attempt fails', () => {
      expect(decideAfterAttempt(decisionInput({ attemptNumber: 16 }))).toEqual({
        decision: 'dead',
        retryAt: null,
        deadReason: 'max_attempts',
        delayMs: null,
      });
      expect(decideAfterAttempt(decisionInput({ attemptNumber: 17 })).deadReason).toBe('max_attempts');
    });

    it('is dead after the first failure when maxAttempts is 1', () => {
      const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, maxAttempts: 1 };
      expect(decideAfterAttempt(decisionInput({ policy })).deadReason).toBe('max_attempts');
    });

    it.each([Number.NaN, 0, -3])('never retries with the nonsensical maxAttempts %p', (maxAttempts) => {
      const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, maxAttempts };
      expect(decideAfterAttempt(decisionInput({ policy })).deadReason).toBe('max_attempts');
    });

    it('treats a corrupt (NaN) attempt number as exhausted rather than retrying forever', () => {
      expect(decideAfterAttempt(decisionInput({ attemptNumber: Number.NaN })).deadReason).toBe('max_attempts');
    });

    it('reports max_attempts rather than expired when both apply', () => {
      const d = decideAfterAttempt(decisionInput({ attemptNumber: 16, publishBy: at(-1) }));
      expect(d.deadReason).toBe('max_attempts');
    });

    it('honours a server wait longer than the backoff', () => {
      expect(decideAfterAttempt(decisionInput({ serverDelayMs: 60_000 }))).toEqual(retryAfter(60_000));
    });

    it('keeps the backoff when the server asks for less', () => {
      expect(decideAfterAttempt(decisionInput({ attemptNumber: 5, serverDelayMs: 1_000, random: () => BELOW_ONE }))).toEqual(
        retryAfter(32_000),
      );
    });

    it('keeps the backoff when the server wait is already over (0)', () => {
      expect(decideAfterAttempt(decisionInput({ attemptNumber: 3, serverDelayMs: 0 }))).toEqual(retryAfter(4_000));
    });

    it('caps the server wait at maxServerDelayMs', () => {
      const tenDays = 10 * 86_400_000;
      expect(decideAfterAttempt(decisionInput({ serverDelayMs: tenDays }))).toEqual(retryAfter(86_400_000));
      expect(decideAfterAttempt(decisionInput({ serverDelayMs: Number.MAX_SAFE_INTEGER }))).toEqual(retryAfter(86_400_000));
    });

    it('honours a per-account server cap', () => {
      const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, maxServerDelayMs: 5 * 60_000 };
      expect(decideAfterAttempt(decisionInput({ policy, serverDelayMs: 3_600_000 }))).toEqual(retryAfter(300_000));
    });

    it.each([Number.NaN, -5_000, Number.NEGATIVE_INFINITY])('ignores the nonsensical server wait %p', (serverDelayMs) => {
      expect(decideAfterAttempt(decisionInput({ attemptNumber: 3, serverDelayMs }))).toEqual(retryAfter(4_000));
    });

    it('caps an infinite server wait', () => {
      expect(decideAfterAttempt(decisionInput({ serverDelayMs: Number.POSITIVE_INFINITY }))).toEqual(retryAfter(86_400_000));
    });

    it('keeps retryAt a valid Date when a policy allows absurd delays', () => {
      const policy: RetryPolicy = {
        baseDelayMs: Number.MAX_SAFE_INTEGER,
        maxDelayMs: Number.POSITIVE_INFINITY,
        maxAttempts: Number.POSITIVE_INFINITY,
        maxServerDelayMs: Number.POSITIVE_INFINITY,
      };
      const d = decideAfterAttempt(decisionInput({ policy, attemptNumber: 2 ** 31, random: () => BELOW_ONE }));
      expect(d.decision).toBe('retry');
      expect(d.retryAt!.getTime()).toBe(MAX_DATE_MS);
      expect(d.delayMs).toBe(MAX_DATE_MS - NOW.getTime());
    });
  });

  describe('publishBy', () => {
    it('is dead as expired when the next attempt would fall after publishBy', () => {
      expect(decideAfterAttempt(decisionInput({ attemptNumber: 3, publishBy: at(3_999) }))).toEqual({
        decision: 'dead',
        retryAt: null,
        deadReason: 'expired',
        delayMs: null,
      });
    });

    it('retries when the next attempt falls exactly at publishBy', () => {
      expect(decideAfterAttempt(decisionInput({ attemptNumber: 3, publishBy: at(4_000) }))).toEqual(retryAfter(4_000));
    });

    it('expires rather than retry early when the server wait passes publishBy', () => {
      const d = decideAfterAttempt(decisionInput({ serverDelayMs: 600_000, publishBy: at(300_000) }));
      expect(d.deadReason).toBe('expired');
    });

    it('expires when publishBy has already passed, even with no wait', () => {
      expect(decideAfterAttempt(decisionInput({ random: () => 0, publishBy: at(-1) })).deadReason).toBe('expired');
    });

    it('never expires without a publishBy', () => {
      expect(decideAfterAttempt(decisionInput({ serverDelayMs: 86_400_000 })).decision).toBe('retry');
    });
  });

  describe('properties', () => {
    const errorClass = fc.constantFrom<ErrorClass>('success', 'transient', 'auth', 'permanent', 'poison');
    const policy = fc.record({
      baseDelayMs: fc.oneof(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER })),
      maxDelayMs: fc.oneof(fc.integer({ min: 0, max: 3_600_000 }), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER })),
      maxAttempts: fc.integer({ min: 0, max: 40 }),
      maxServerDelayMs: fc.integer({ min: 0, max: 10 * 86_400_000 }),
    });
    const input = fc.record({
      errorClass,
      attemptNumber: fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: -5, max: 2 ** 31 + 10 })),
      policy,
      serverDelayMs: fc.option(fc.oneof(fc.integer({ min: 0, max: 2 * 86_400_000 }), fc.double()), { nil: null }),
      publishBy: fc.option(fc.integer({ min: -86_400_000, max: 7 * 86_400_000 }).map(at), { nil: null }),
      now: fc.constant(NOW),
      random: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }).map((r) => () => r),
    });

    it('never schedules a retry after publishBy or before now', () => {
      fc.assert(
        fc.property(input, (i) => {
          const d = decideAfterAttempt(i);
          if (d.decision !== 'retry') return;
          const retryAt = d.retryAt!.getTime();
          expect(Number.isFinite(retryAt)).toBe(true);
          expect(retryAt).toBeGreaterThanOrEqual(i.now.getTime());
          if (i.publishBy !== null) expect(retryAt).toBeLessThanOrEqual(i.publishBy.getTime());
          expect(d.delayMs).toBe(retryAt - i.now.getTime());
          expect(Number.isSafeInteger(d.delayMs)).toBe(true);
        }),
        { numRuns: 2_000 },
      );
    });

    it('waits at least the capped server wait and at most max(ceiling, cap)', () => {
      fc.assert(
        fc.property(input, (i) => {
          const d = decideAfterAttempt(i);
          if (d.decision !== 'retry') return;
          const server = i.serverDelayMs !== null && i.serverDelayMs > 0 ? i.serverDelayMs : 0;
          const cappedServer = Math.min(server, i.policy.maxServerDelayMs);
          const ceiling = backoffCeilingMs(i.attemptNumber, i.policy.baseDelayMs, i.policy.maxDelayMs);
          expect(d.delayMs!).toBeGreaterThanOrEqual(Math.floor(cappedServer));
          expect(d.delayMs!).toBeLessThanOrEqual(Math.max(ceiling, cappedServer));
        }),
        { numRuns: 1_000 },
      );
    });

    it('fills exactly the fields that belong to each decision', () => {
      fc.assert(
        fc.property(input, (i) => {
          const d = decideAfterAttempt(i);
          expect(d.retryAt !== null).toBe(d.decision === 'retry');
          expect(d.delayMs !== null).toBe(d.decision === 'retry');
          expect(d.deadReason !== null).toBe(d.decision === 'dead');
          if (d.decision === 'retry') {
            expect(i.errorClass).toBe('transient');
            expect(i.attemptNumber).toBeLessThan(i.policy.maxAttempts);
          }
        }),
        { numRuns: 1_000 },
      );
    });
  });
});

describe('isExpired', () => {
  it('is never expired without a publishBy', () => {
    expect(isExpired(null, NOW)).toBe(false);
  });

  it('is not expired before or exactly at publishBy', () => {
    expect(isExpired(at(1), NOW)).toBe(false);
    expect(isExpired(at(0), NOW)).toBe(false);
  });

  it('is expired once now is after publishBy', () => {
    expect(isExpired(at(-1), NOW)).toBe(true);
  });
});
