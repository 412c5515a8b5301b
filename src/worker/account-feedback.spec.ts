import { CLOSED_CIRCUIT, DEFAULT_BREAKER } from '../retry/circuit-breaker';
import type { ErrorClass } from '../retry/error-class';
import { accountFeedback } from './account-feedback';
import type { LockedAccount } from '../account-state/account-state';
import type { FinishedAttempt } from '../queue/queue.types';

const t0 = Date.parse('2026-11-29T12:00:00Z');
let seq = 0;
function attempt(accountId: string, errorClass: ErrorClass, atMs: number, message: string | null = null): FinishedAttempt {
  seq += 1;
  return {
    jobId: `job-${seq}`,
    accountId,
    attemptNumber: 1,
    idempotencyKey: `k-${seq}`,
    startedAt: new Date(t0 + atMs - 10),
    finishedAt: new Date(t0 + atMs),
    httpStatus: null,
    networkError: null,
    errorClass,
    message: message ?? (errorClass === 'success' ? null : `${errorClass} failure`),
    responseExcerpt: null,
    decision: errorClass === 'success' ? 'succeed' : 'retry',
    delayMs: null,
    deadReason: null,
    remoteId: null,
    remoteUrl: null,
    parts: null,
    warnings: [],
    credentialsVersion: 1,
    refreshedCredentials: null,
  };
}
const active = (id: string, circuit = CLOSED_CIRCUIT, credentialsVersion = 1): LockedAccount => ({
  id,
  status: 'active',
  circuit,
  maxInFlight: 5,
  circuitClosedAt: null,
  slowStartLeased: 0,
  deleted: false,
  credentialsVersion,
});

describe('accountFeedback', () => {
  it('opens the circuit on the 5th consecutive transient failure, in finish order', () => {
    const attempts = [1, 2, 3, 4, 5].map((i) => attempt('a', 'transient', i * 10));
    const fb = accountFeedback([active('a')], attempts.reverse(), DEFAULT_BREAKER).get('a')!;
    expect(fb.circuit.state).toBe('open');
    expect(fb.opened).toBe(true);
    expect(fb.circuit.openUntil).toEqual(new Date(t0 + 50 + 30_000));
  });

  it('a success in between resets the count (the order of finishing decides)', () => {
    const attempts = [
      attempt('a', 'transient', 10),
      attempt('a', 'transient', 20),
      attempt('a', 'success', 30),
      attempt('a', 'transient', 40),
    ];
    const fb = accountFeedback([active('a')], attempts, DEFAULT_BREAKER).get('a')!;
    expect(fb.circuit).toEqual({ state: 'closed', openUntil: null, consecutiveFailures: 1 });
    expect(fb.succeeded).toBe(true);
    expect(fb.lastError).toBe('transient failure');
  });

  it('reports closed when a half-open or open circuit closes (the slow start begins), not when a closed one stays closed', () => {
    const half = { state: 'half_open' as const, openUntil: new Date(t0 + 60_000), consecutiveFailures: 7 };
    const open = { state: 'open' as const, openUntil: new Date(t0 + 60_000), consecutiveFailures: 7 };
    expect(accountFeedback([active('a', half)], [attempt('a', 'success', 10)], DEFAULT_BREAKER).get('a')!.closed).toBe(true);
    expect(accountFeedback([active('a', open)], [attempt('a', 'success', 10)], DEFAULT_BREAKER).get('a')!.closed).toBe(true);
    expect(accountFeedback([active('a', half)], [attempt('a', 'permanent', 10)], DEFAULT_BREAKER).get('a')!.closed).toBe(true);
    expect(accountFeedback([active('a')], [attempt('a', 'success', 10)], DEFAULT_BREAKER).get('a')!.closed).toBe(false);
    expect(accountFeedback([active('a', half)], [attempt('a', 'transient', 10)], DEFAULT_BREAKER).get('a')!.closed).toBe(false);
    // Closed, then opened again by failures later in the same batch: still open, no slow start.
    const reopened = accountFeedback(
      [active('a', { ...half, consecutiveFailures: 0 })],
      [attempt('a', 'success', 10), ...[1, 2, 3, 4, 5].map((i) => attempt('a', 'transient', 10 + i))],
      DEFAULT_BREAKER,
    ).get('a')!;
    expect(reopened.circuit.state).toBe('open');
    expect(reopened.closed).toBe(false);
  });

  it('marks the account needs_reauth on an auth failure', () => {
    const fb = accountFeedback([active('a')], [attempt('a', 'auth', 10, 'HTTP 401: unauthorized')], DEFAULT_BREAKER).get('a')!;
    expect(fb.status?.value).toBe('needs_reauth');
    expect(fb.status?.reason).toContain('HTTP 401');
  });

  it('ignores an auth failure of credentials a person has replaced since the attempt began', () => {
    const stale = { ...attempt('a', 'auth', 10, 'HTTP 401: unauthorized'), credentialsVersion: 1 };
    const fb = accountFeedback([active('a', CLOSED_CIRCUIT, 2)], [stale], DEFAULT_BREAKER).get('a')!;
    expect(fb.status).toBeNull();
    expect(fb.lastError).toBeNull();
  });

  it('disables the account at 50 consecutive failures', () => {
    const near = { state: 'closed' as const, openUntil: null, consecutiveFailures: 49 };
    const fb = accountFeedback([active('a', near)], [attempt('a', 'transient', 10)], DEFAULT_BREAKER).get('a')!;
    expect(fb.status?.value).toBe('disabled');
  });

  it('keeps the accounts apart', () => {
    const fb = accountFeedback([active('a'), active('b')], [attempt('a', 'auth', 10), attempt('b', 'success', 20)], DEFAULT_BREAKER);
    expect(fb.get('a')!.status?.value).toBe('needs_reauth');
    expect(fb.get('b')!.status).toBeNull();
    expect(fb.get('b')!.succeeded).toBe(true);
  });

  it('leaves an account that is already not active as it is', () => {
    const fb = accountFeedback([{ ...active('a'), status: 'disabled' }], [attempt('a', 'auth', 10)], DEFAULT_BREAKER);
    expect(fb.get('a')!.status).toBeNull();
  });
});
