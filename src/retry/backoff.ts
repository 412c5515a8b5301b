/**
 * Exponential backoff with full jitter (docs/delivery.md "Retry timing"). Full jitter rather than
 * "equal" or "decorrelated" jitter because it spreads the retries of many jobs that failed
 * together (one receiver outage) over the whole window, which is what keeps a recovering receiver
 * from being hit by a synchronised wave.
 */

export interface RetryPolicy {
  /** The first retry's ceiling; each later attempt doubles it. */
  baseDelayMs: number;
  /** The cap on the backoff ceiling. */
  maxDelayMs: number;
  /** Attempts in total, the first included; the job is dead after this many transient failures. */
  maxAttempts: number;
  /** The cap on a server-requested wait (Retry-After, RateLimit-Reset): a hostile or broken
   * receiver cannot park a job for a year. */
  maxServerDelayMs: number;
  /**
   * `full` (the default): a uniform draw in [0, ceiling]. `none`: the ceiling itself, so jobs that
   * failed together retry together; it exists to measure what jitter buys (RETRY_JITTER).
   */
  jitter?: 'full' | 'none';
}

/**
 * Defaults (docs/delivery.md): base 2 s, cap 1 h, 16 attempts, server waits honoured up to 24 h.
 * With these the ceilings run 2 s, 4 s, 8 s, ... 2048 s (attempt 11) and 1 h from attempt 12 on,
 * so the 15 retries span about 5 h if every draw hit its ceiling and about half that on average.
 */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  baseDelayMs: 2000,
  maxDelayMs: 3_600_000,
  maxAttempts: 16,
  maxServerDelayMs: 86_400_000,
};

/**
 * Doubling more than this many times takes any base ≥ 1 ms past Number.MAX_SAFE_INTEGER (< 2^53),
 * so the ceiling is the cap without computing the power.
 */
const MAX_USEFUL_EXPONENT = 53;

/** A non-negative finite amount of ms; NaN and negatives are 0, +Infinity saturates. */
function sanitiseMs(ms: number): number {
  if (Number.isNaN(ms) || ms <= 0) return 0;
  return Math.min(ms, Number.MAX_SAFE_INTEGER);
}

/**
 * ceiling(n) = min(max, base × 2^(n−1)) for the 1-based attempt n that just failed, in
 * saturating integer math: for any n (2^31, 2^53, Infinity) it returns an integer in
 * [0, min(max, MAX_SAFE_INTEGER)] and never NaN, Infinity, a negative value or an exception.
 * 2^(n−1) is computed only when n − 1 ≤ 53: a power of two times a finite double below 2^53 is
 * then exact and finite (< 2^106), and beyond that exponent the product is past any cap anyway.
 * n < 1 (and NaN) is treated as 1, a fractional n is floored.
 */
export function backoffCeilingMs(attempt: number, baseMs: number, maxMs: number): number {
  const cap = Math.floor(sanitiseMs(maxMs));
  const base = sanitiseMs(baseMs);
  if (base === 0 || cap === 0) return 0;

  const n = Number.isNaN(attempt) || attempt < 1 ? 1 : Math.floor(attempt);
  const exponent = n - 1; // may be Infinity; the comparison handles it
  if (exponent >= MAX_USEFUL_EXPONENT) return cap;

  const uncapped = base * 2 ** exponent;
  return Math.floor(Math.min(cap, uncapped));
}

/**
 * A uniformly random integer delay in [0, ceiling(attempt)], both ends included:
 * floor(random() × (ceiling + 1)). `random` must return values in [0, 1) (Math.random's contract);
 * a misbehaving source (1, negative, NaN) is clamped into the window instead of producing a delay
 * outside it. ceiling + 1 ≤ 2^53 is still exact, so the top value stays reachable.
 */
export function fullJitterDelayMs(attempt: number, policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs'>, random: () => number): number {
  const ceiling = backoffCeilingMs(attempt, policy.baseDelayMs, policy.maxDelayMs);
  const r = random();
  if (!(r > 0)) return 0; // 0, negative or NaN
  const drawn = Math.floor(r * (ceiling + 1));
  return Math.min(drawn, ceiling);
}

/** The backoff of the 1-based attempt that just failed, as the policy's jitter says. */
export function backoffDelayMs(
  attempt: number,
  policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs' | 'jitter'>,
  random: () => number,
): number {
  if (policy.jitter === 'none') return backoffCeilingMs(attempt, policy.baseDelayMs, policy.maxDelayMs);
  return fullJitterDelayMs(attempt, policy, random);
}

/** Per-account override of the retry policy; absent fields use the configured defaults. */
export interface RetryPolicyOverride {
  baseDelayMs?: number;
  maxDelayMs?: number;
  maxAttempts?: number;
}
