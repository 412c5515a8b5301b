import { ErrorClass } from './error-class';
import { addMsClamped } from './instant';

/**
 * Pure transitions of the per-account circuit breaker (docs/delivery.md "the circuit breaker").
 * The caller persists the Circuit and performs the probe claim atomically in the database
 * (compare-and-set from open to half_open), so one probe goes out whatever the number of workers.
 */

export type CircuitStateName = 'closed' | 'open' | 'half_open';

export interface Circuit {
  state: CircuitStateName;
  /** While open: the end of the cooldown. */
  openUntil: Date | null;
  /** Transient failures in a row, counted in the order attempts finish. */
  consecutiveFailures: number;
}

export interface BreakerConfig {
  /** Consecutive transient failures that open a closed circuit. */
  failureThreshold: number;
  /** How long the circuit stays open before one probe is allowed; starts when it opens. */
  cooldownMs: number;
  /** Consecutive transient failures that disable the account. */
  disableThreshold: number;
}

export const DEFAULT_BREAKER: BreakerConfig = {
  failureThreshold: 5,
  cooldownMs: 30_000,
  disableThreshold: 50,
};

export const CLOSED_CIRCUIT: Circuit = { state: 'closed', openUntil: null, consecutiveFailures: 0 };

/**
 * - allow: send the attempt.
 * - defer: leave the job due without attempting it and without spending an attempt.
 * - probe: the cooldown is over; the caller may send one attempt after claiming the probe
 *   (startProbe, persisted atomically). A worker that loses the claim must defer.
 */
export type Gate = 'allow' | 'defer' | 'probe';

/**
 * Whether a due job of this account may be attempted now. An open circuit without an openUntil
 * (a row written by hand or by an older version) is treated as cooled down, so it can never stay
 * open forever. half_open defers while its single probe is out; its openUntil is the probe's
 * deadline (the probe job's lease): past it, the probe's worker died without an answer, and
 * another probe may go.
 */
export function gate(c: Circuit, now: Date): Gate {
  switch (c.state) {
    case 'closed':
      return 'allow';
    case 'open':
    case 'half_open':
      return c.openUntil === null || now.getTime() >= c.openUntil.getTime() ? 'probe' : 'defer';
  }
}

/** The transition the probe claim performs: open → half_open. Other states are returned as they are. */
export function startProbe(c: Circuit, probeDeadline: Date): Circuit {
  if (c.state === 'closed') return { ...c };
  return { ...c, state: 'half_open', openUntil: probeDeadline };
}

export interface AttemptFeedback {
  next: Circuit;
  /** The circuit went into open with this outcome (from closed, or again after a failed probe). */
  opened: boolean;
  /** The consecutive failures reached the disable threshold: disable the account and alert. */
  disable: boolean;
}

function increment(count: number): number {
  const safe = Number.isFinite(count) && count > 0 ? Math.floor(count) : 0;
  return Math.min(safe + 1, Number.MAX_SAFE_INTEGER);
}

/**
 * A cooldown of at least `cooldownMs` and less than 1.5 × it: cooldown + floor(r × cooldown / 2).
 * Accounts whose circuits opened together (one receiver behind many accounts went down) would
 * otherwise probe together, every cooldown, and all close in the same second when the receiver
 * is back: their waiting jobs would hit it as one wave. `random` must return values in [0, 1);
 * anything else (1, negative, NaN) is clamped, and `() => 0` gives the exact cooldown.
 */
export function jitteredCooldownMs(cooldownMs: number, random: () => number): number {
  const base = cooldownMs > 0 ? cooldownMs : 0;
  const r = random();
  if (!(r > 0)) return base;
  return base + Math.floor(Math.min(r, 1 - Number.EPSILON) * (base / 2));
}

/**
 * Steps the circuit with the class of one finished attempt.
 *
 * - success: closed, count 0, whatever the state. docs/delivery.md: any success resets the count; an
 *   in-flight attempt that succeeds while the circuit is open proves the receiver answers, so it
 *   closes the circuit as a successful probe would.
 * - transient: count + 1.
 *   - half_open: the probe failed, so open again for a fresh cooldown starting now (opened).
 *   Every cooldown is jittered with `random` (jitteredCooldownMs); the default gives the exact one.
 *     A non-probe attempt that was in flight and fails while the probe is out has the same
 *     effect; it is as much evidence that the receiver is still unhealthy.
 *   - closed and count ≥ failureThreshold: open for cooldownMs from now (opened).
 *   - open: attempts already in flight finish and count (docs/delivery.md), but they neither extend the
 *     cooldown nor report opened again: the cooldown starts when the circuit opens.
 *   disable whenever count ≥ disableThreshold; the caller disables idempotently.
 * - auth / permanent / poison: about the credentials or the payload, not the receiver's health,
 *   so they neither count nor reset the count (one bad post must not hide an outage, nor make it
 *   look like one). The exception is a half_open probe ending that way: the receiver answered,
 *   which is what the probe wanted to know, so the circuit closes with count 0.
 */
export function recordOutcome(
  c: Circuit,
  errorClass: ErrorClass,
  now: Date,
  cfg: BreakerConfig,
  random: () => number = () => 0,
): AttemptFeedback {
  switch (errorClass) {
    case 'success':
      return { next: { ...CLOSED_CIRCUIT }, opened: false, disable: false };

    case 'auth':
    case 'permanent':
    case 'poison':
      if (c.state === 'half_open') return { next: { ...CLOSED_CIRCUIT }, opened: false, disable: false };
      return { next: { ...c }, opened: false, disable: false };

    case 'transient': {
      const count = increment(c.consecutiveFailures);
      const disable = count >= cfg.disableThreshold;
      const openFromNow = (): Circuit => ({
        state: 'open',
        openUntil: addMsClamped(now, jitteredCooldownMs(cfg.cooldownMs, random)),
        consecutiveFailures: count,
      });
      if (c.state === 'half_open') return { next: openFromNow(), opened: true, disable };
      if (c.state === 'open') return { next: { ...c, consecutiveFailures: count }, opened: false, disable };
      if (count >= cfg.failureThreshold) return { next: openFromNow(), opened: true, disable };
      return { next: { ...c, consecutiveFailures: count }, opened: false, disable };
    }
  }
}
