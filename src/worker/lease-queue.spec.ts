import type { ClaimedJob, FinishedAttempt } from '../queue/queue.types';
import { LeaseQueue, leaseMargin } from './lease-queue';

/** The worker's local queue, driven by fake timers: what starts when, and when a signal fires. */
describe('LeaseQueue', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  let seq = 0;
  const job = (accountId = 'a', over: Partial<ClaimedJob> = {}): ClaimedJob => {
    seq += 1;
    return {
      id: `job-${seq}`,
      postId: 'p',
      accountId,
      workspaceId: 'w',
      provider: 'webhook',
      idempotencyKey: `job-${seq}`,
      attemptNumber: 1,
      attemptsInBudget: 0,
      payload: { text: 't', title: null, link: null, media: [], metadata: null, scheduledAt: new Date(0).toISOString() },
      published: [],
      publishBy: null,
      previousErrorClass: null,
      previousHttpStatus: null,
      previousNetworkError: null,
      credentialsVersion: 1,
      retryPolicy: null,
      maxInFlight: 2,
      claimedAt: new Date(),
      ...over,
    };
  };
  const outcome = (j: ClaimedJob, errorClass: FinishedAttempt['errorClass'] = 'success'): FinishedAttempt => ({
    jobId: j.id,
    accountId: j.accountId,
    attemptNumber: j.attemptNumber,
    idempotencyKey: j.idempotencyKey,
    startedAt: new Date(),
    finishedAt: new Date(),
    httpStatus: 200,
    networkError: null,
    errorClass,
    message: null,
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
  });

  /** A queue whose attempts run until the test ends them (or their signal fires). */
  function setup(o: { leaseMs?: number; attemptTimeoutMs?: number; concurrency?: number; ignoreSignal?: boolean } = {}) {
    const started: { job: ClaimedJob; signal: AbortSignal; end: (errorClass?: FinishedAttempt['errorClass']) => void }[] = [];
    const finished: FinishedAttempt[] = [];
    const warnings: string[] = [];
    const q = new LeaseQueue({
      concurrency: o.concurrency ?? 100,
      leaseMs: o.leaseMs ?? 9_000,
      attemptTimeoutMs: o.attemptTimeoutMs ?? 60_000,
      run: (j, signal) =>
        new Promise((resolve) => {
          const end = (errorClass: FinishedAttempt['errorClass'] = 'success') => resolve(outcome(j, errorClass));
          started.push({ job: j, signal, end });
          if (!o.ignoreSignal) signal.addEventListener('abort', () => end('transient'));
        }),
      finished: (a) => finished.push(a),
      changed: () => undefined,
      warn: (m) => warnings.push(m),
    });
    return { q, started, finished, warnings };
  }
  const flush = () => new Promise<void>((r) => jest.requireActual<typeof import('timers')>('timers').setImmediate(r));

  it('runs at most the account cap at once and starts the next job as a slot frees', async () => {
    const { q, started } = setup();
    const jobs = [job(), job(), job(), job()];
    q.add(jobs, Date.now());
    expect(started.map((s) => s.job.id)).toEqual([jobs[0].id, jobs[1].id]);
    started[0].end();
    await flush();
    expect(started.map((s) => s.job.id)).toEqual([jobs[0].id, jobs[1].id, jobs[2].id]);
    expect(q.room).toBe(100 - 3);
  });

  it('gives the waiting jobs of an account back, unattempted, after one of its attempts failed', async () => {
    const { q, started } = setup();
    const jobs = [job(), job(), job(), job()];
    q.add(jobs, Date.now());
    started[0].end('transient');
    await flush();
    expect(started).toHaveLength(2);
    expect(q.takeReturns().release.map((r) => r.id)).toEqual([jobs[2].id, jobs[3].id]);
  });

  it('fires the signal when the attempt has used its whole time budget', () => {
    const { q, started } = setup({ attemptTimeoutMs: 30_000, leaseMs: 60_000 });
    q.add([job()], Date.now());
    jest.advanceTimersByTime(29_999);
    expect(started[0].signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    expect(started[0].signal.aborted).toBe(true);
    expect((started[0].signal.reason as DOMException).name).toBe('TimeoutError');
    expect((started[0].signal.reason as DOMException).message).toContain('WORKER_ATTEMPT_TIMEOUT_MS');
  });

  it('keeps an attempt running past its first lease while renewals succeed', () => {
    const { q, started } = setup({ leaseMs: 9_000, attemptTimeoutMs: 60_000 });
    q.add([job()], Date.now());
    for (let i = 0; i < 10; i++) {
      jest.advanceTimersByTime(3_000);
      q.renewed(q.renewal(), new Set(q.heldIds()), Date.now());
    }
    expect(started[0].signal.aborted).toBe(false); // 30 s in, on a 9 s lease
  });

  it('stops an attempt a margin before its lease runs out when renewals fail', () => {
    const leaseMs = 9_000;
    const { q, started } = setup({ leaseMs, attemptTimeoutMs: 60_000 });
    q.add([job()], Date.now());
    jest.advanceTimersByTime(3_000);
    q.renewed(q.renewal(), new Set(q.heldIds()), Date.now()); // lease now ends at 12 s
    jest.advanceTimersByTime(12_000 - leaseMargin(leaseMs) - 3_000 - 1);
    expect(started[0].signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    expect(started[0].signal.aborted).toBe(true);
    expect((started[0].signal.reason as DOMException).message).toContain('lease could not be renewed');
  });

  it('does not start a waiting job whose publishBy passed: it is expired, without an attempt', async () => {
    const { q, started } = setup();
    const first = job('a', { maxInFlight: 1 });
    const late = job('a', { maxInFlight: 1, publishBy: new Date(Date.now() + 1_000) });
    q.add([first, late], Date.now());
    jest.advanceTimersByTime(1_001);
    started[0].end();
    await flush();
    expect(started).toHaveLength(1);
    expect(q.takeReturns()).toEqual({ release: [], expired: [{ id: late.id, attemptNumber: 1 }] });
  });

  it('does not start a waiting job whose lease it could not renew, and drops one taken over by another worker', async () => {
    const { q, started } = setup({ leaseMs: 9_000 });
    const [a, b, c] = [job('a', { maxInFlight: 1 }), job('a', { maxInFlight: 1 }), job('a', { maxInFlight: 1 })];
    q.add([a, b, c], Date.now());
    jest.advanceTimersByTime(3_000);
    q.renewed(q.renewal(), new Set([a.id, b.id]), Date.now()); // c was reclaimed by another process
    expect(q.heldIds().sort()).toEqual([a.id, b.id].sort());
    jest.advanceTimersByTime(5_000); // no renewal since: b's lease is nearly over
    started[0].end();
    await flush();
    expect(started).toHaveLength(1);
    expect(q.takeReturns().release.map((r) => r.id)).toEqual([b.id]);
  });

  it('keeps renewing a waiting job claimed while a renewal was on its way (the answer does not name it)', () => {
    const { q, started } = setup({ leaseMs: 9_000 });
    const [a, b] = [job('a', { maxInFlight: 1 }), job('a', { maxInFlight: 1 })];
    q.add([a], Date.now());
    const scope = q.renewal(); // a renewal is sent for [a] ...
    jest.advanceTimersByTime(10);
    q.add([b], Date.now()); // ... a round claims b meanwhile: it waits behind a for the account's slot
    q.renewed(scope, new Set(scope.ids), Date.now()); // ... and the renewal answers for a alone
    expect(q.heldIds().sort()).toEqual([a.id, b.id].sort());
    expect(q.takeReturns().release).toEqual([]);
    expect(started.map((s) => s.job.id)).toEqual([a.id]);
  });

  it('keeps a job given back and claimed again while a renewal was on its way: the answer was about the old claim', () => {
    const { q } = setup({ leaseMs: 9_000 });
    const running = job('a', { maxInFlight: 1 });
    const waiting = job('a', { maxInFlight: 1 });
    q.add([running, waiting], Date.now());
    const scope = q.renewal(); // sent for [running, waiting]
    q.giveBack('a'); // waiting goes back (its release is written) ...
    const again: ClaimedJob = { ...waiting }; // ... and a later round claims it again
    q.add([again], Date.now());
    q.renewed(scope, new Set([running.id]), Date.now()); // the renewal ran between the two: not ours then
    expect(q.heldIds().sort()).toEqual([running.id, again.id].sort());
  });

  it('drains at shutdown: waiting jobs go back at once, running ones get the grace period, then their signal fires', async () => {
    const { q, started } = setup();
    const jobs = [job(), job(), job()];
    q.add(jobs, Date.now());
    const drained = q.drain(2_000);
    expect(q.state).toBe('draining');
    expect(q.room).toBe(0);
    expect(q.takeReturns().release.map((r) => r.id)).toEqual([jobs[2].id]);
    started[0].end();
    await flush();
    jest.advanceTimersByTime(2_000);
    await drained;
    expect(started[1].signal.aborted).toBe(true);
    expect((started[1].signal.reason as DOMException).name).toBe('AbortError');
    expect(q.state).toBe('stopped');
    q.add([job()], Date.now());
    expect(started).toHaveLength(2);
    expect(q.takeReturns().release).toHaveLength(1);
  });

  it('stops renewing the lease of an attempt whose connector ignores its deadline, after one more lease', async () => {
    const { q, started, warnings } = setup({ leaseMs: 9_000, attemptTimeoutMs: 10_000, ignoreSignal: true });
    const j = job();
    q.add([j], Date.now());
    jest.advanceTimersByTime(10_000);
    await flush();
    expect(started[0].signal.aborted).toBe(true);
    jest.advanceTimersByTime(9_000);
    await flush();
    expect(q.heldIds()).toEqual([j.id]); // still running: its slot and lease kept, no second attempt under it
    jest.advanceTimersByTime(1);
    expect(q.heldIds()).toEqual([]);
    expect(warnings.join('\n')).toContain(`job ${j.id} is still running long after its deadline`);
  });
});
