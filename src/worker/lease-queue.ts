import type { ClaimedJob, FinishedAttempt, LeasedJobRef } from '../queue/queue.types';

/**
 * The jobs one worker process holds: leased to it in the database, running or waiting here for a
 * free slot of their account (graphile-worker's LocalQueue plays the same part). A round leases
 * up to 2 × an account's in-flight cap; this queue runs at most the cap at once and starts the
 * next job of the account the moment a slot frees, without a database round in between.
 *
 * Modes (one-way):
 * - `running`: claimed jobs are queued per account and started while their account has a free
 *   slot; jobs of an account whose attempt failed go back unattempted (`giveBack`), so the next
 *   round decides first (circuit breaker, needs_reauth, disable), as if nothing had been queued.
 * - `draining` (shutdown): nothing starts any more; waiting jobs go back; running attempts get
 *   the grace period to finish, then their deadline signal fires.
 * - `stopped`: nothing is held; anything handed in goes straight back.
 *
 * Deadlines. Every running attempt has an AbortSignal (the connector's `signal`) that fires at
 * the first of:
 * - its time budget: started + WORKER_ATTEMPT_TIMEOUT_MS, for all its HTTP calls together;
 * - its lease: the worker renews the leases of everything it holds every third of a lease
 *   (`renewed`); when renewals fail (the database is unreachable), the attempt is stopped
 *   `leaseMargin` before the last lease it knows of runs out, before another process may
 *   reclaim the job and start it again: never two attempts of a job in flight;
 * - shutdown, after the grace period.
 * Lease times are this process's clock: the moment a claim or renewal was *sent* plus the lease,
 * never later than the database's own expiry.
 *
 * A connector that ignores its signal (a bug) keeps its slot and its lease while it runs, so the
 * job is not taken over under it; past its deadline plus one lease its lease is no longer
 * renewed, the job is reclaimed by the crash recovery, and whatever the connector returns later
 * is recorded as a late outcome.
 */
export type LeaseQueueMode = 'running' | 'draining' | 'stopped';

export interface LeaseQueueOptions {
  /** Jobs this process may hold at once (running and waiting). */
  concurrency: number;
  leaseMs: number;
  attemptTimeoutMs: number;
  /** Runs one attempt; never throws. */
  run(job: ClaimedJob, signal: AbortSignal): Promise<FinishedAttempt>;
  /** An attempt finished: its outcome is to be recorded. */
  finished(attempt: FinishedAttempt): void;
  /** Something to write (outcomes, jobs given back or expired): a round should run. */
  changed(): void;
  warn(message: string): void;
  now?: () => number;
}

/**
 * The jobs one renewal covers. Claims are told apart by their ClaimedJob object, not their id: a
 * job given back and claimed again by this process is a new claim the old answer says nothing about.
 */
export interface RenewalScope {
  readonly ids: string[];
  readonly claims: ReadonlySet<ClaimedJob>;
}

interface Held {
  job: ClaimedJob;
  /** This process's clock: until when the lease is surely ours (sent-at + lease). */
  heldUntil: number;
}

interface Running extends Held {
  controller: AbortController;
  timer: NodeJS.Timeout | null;
  deadline: number;
  /** Past this, its lease is no longer renewed (its connector ignored the deadline). */
  renewUntil: number;
  overrunReported: boolean;
}

/** How long before the end of a lease that cannot be renewed a running attempt is stopped. */
export function leaseMargin(leaseMs: number): number {
  return Math.min(2_000, Math.floor(leaseMs / 4));
}

export class LeaseQueue {
  private mode: LeaseQueueMode = 'running';
  private readonly queued = new Map<string, Held[]>();
  private queuedCount = 0;
  private readonly running = new Map<string, Running>();
  private readonly runningPerAccount = new Map<string, number>();
  private release: LeasedJobRef[] = [];
  private expired: LeasedJobRef[] = [];
  private readonly idleWaiters: (() => void)[] = [];
  private readonly now: () => number;
  private readonly margin: number;

  constructor(private readonly o: LeaseQueueOptions) {
    this.now = o.now ?? Date.now;
    this.margin = leaseMargin(o.leaseMs);
  }

  get state(): LeaseQueueMode {
    return this.mode;
  }

  /** How many more jobs a round may lease for this process. */
  get room(): number {
    return this.mode === 'running' ? Math.max(0, this.o.concurrency - this.running.size - this.queuedCount) : 0;
  }

  get runningCount(): number {
    return this.running.size;
  }

  /** Jobs claimed by a round whose claim statement was sent at `sentAt` (this process's clock). */
  add(jobs: ClaimedJob[], sentAt: number): void {
    const heldUntil = sentAt + this.o.leaseMs;
    if (this.mode !== 'running') {
      this.release.push(...jobs.map(ref));
      this.o.changed();
      return;
    }
    const accounts = new Set<string>();
    for (const job of jobs) {
      const list = this.queued.get(job.accountId);
      if (list) list.push({ job, heldUntil });
      else this.queued.set(job.accountId, [{ job, heldUntil }]);
      this.queuedCount += 1;
      accounts.add(job.accountId);
    }
    for (const id of accounts) this.start(id);
  }

  /** Claimed jobs this process cannot take after all (e.g. their accounts could not be read): back, unattempted. */
  refuse(jobs: ClaimedJob[]): void {
    this.release.push(...jobs.map(ref));
    this.o.changed();
  }

  /** The account's waiting jobs go back unattempted (its attempt failed, or it was disabled or deleted). */
  giveBack(accountId: string): void {
    const list = this.queued.get(accountId);
    if (!list) return;
    this.queued.delete(accountId);
    this.queuedCount -= list.length;
    this.release.push(...list.map((h) => ref(h.job)));
    this.o.changed();
  }

  /** What the next round must write besides outcomes; `restore` puts it back if the round fails. */
  takeReturns(): { release: LeasedJobRef[]; expired: LeasedJobRef[] } {
    const out = { release: this.release, expired: this.expired };
    this.release = [];
    this.expired = [];
    return out;
  }

  restore(returns: { release: LeasedJobRef[]; expired: LeasedJobRef[] }): void {
    this.release.unshift(...returns.release);
    this.expired.unshift(...returns.expired);
  }

  get hasReturns(): boolean {
    return this.release.length > 0 || this.expired.length > 0;
  }

  /** Every job whose lease this process renews: running (within their overrun allowance) and waiting. */
  heldIds(): string[] {
    return this.renewal().ids;
  }

  /**
   * What a renewal sent now covers: the ids to send, and the claims they stand for. The answer
   * (`renewed`) speaks only for these claims: a job claimed while the renewal was on its way is
   * not in it, and must not be taken for one another worker took over.
   */
  renewal(): RenewalScope {
    const now = this.now();
    const ids: string[] = [];
    const claims = new Set<ClaimedJob>();
    for (const r of this.running.values()) {
      if (now <= r.renewUntil) {
        ids.push(r.job.id);
        claims.add(r.job);
      } else if (!r.overrunReported) {
        r.overrunReported = true;
        this.o.warn(
          `the attempt of job ${r.job.id} is still running long after its deadline: its lease is no longer renewed, another worker will retry it`,
        );
      }
    }
    for (const list of this.queued.values()) {
      for (const h of list) {
        ids.push(h.job.id);
        claims.add(h.job);
      }
    }
    return { ids, claims };
  }

  /**
   * The renewal of `scope`, sent at `sentAt`, came back with `stillHeld`, the jobs still ours.
   * Those get a new lease; a waiting job of the scope that is not ours any more (reclaimed while
   * we could not reach the database) is dropped without a write; a running one keeps its old
   * lease end, so its signal fires before it. Jobs outside the scope (claimed after it was sent)
   * keep the lease of their claim until the next renewal.
   */
  renewed(scope: RenewalScope, stillHeld: Set<string>, sentAt: number): void {
    const heldUntil = sentAt + this.o.leaseMs;
    const ours = (job: ClaimedJob) => scope.claims.has(job) && stillHeld.has(job.id);
    for (const r of this.running.values()) {
      if (!ours(r.job)) continue;
      r.heldUntil = Math.max(r.heldUntil, heldUntil);
      this.arm(r);
    }
    for (const [accountId, list] of this.queued) {
      const kept = list.filter((h) => !scope.claims.has(h.job) || stillHeld.has(h.job.id));
      for (const h of kept) if (ours(h.job)) h.heldUntil = Math.max(h.heldUntil, heldUntil);
      if (kept.length === list.length) continue;
      this.o.warn(
        `${list.length - kept.length} waiting jobs of account ${accountId} were taken over by another worker while this one could not reach the database`,
      );
      this.queuedCount -= list.length - kept.length;
      if (kept.length > 0) this.queued.set(accountId, kept);
      else this.queued.delete(accountId);
    }
  }

  /**
   * Shutdown: nothing starts any more, waiting jobs go back, running attempts get `graceMs` to
   * finish, then their signals fire; resolves when none runs.
   */
  async drain(graceMs: number): Promise<void> {
    if (this.mode === 'stopped') return;
    this.setMode('draining');
    for (const accountId of [...this.queued.keys()]) this.giveBack(accountId);
    if (this.running.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), graceMs);
      });
      const outcome = await Promise.race([this.whenIdle().then(() => 'idle' as const), grace]);
      clearTimeout(timer);
      if (outcome === 'timeout') {
        this.o.warn(`${this.running.size} attempts still running after ${graceMs} ms: stopping them`);
        for (const r of this.running.values())
          r.controller.abort(new DOMException('Herald is shutting down (WORKER_SHUTDOWN_GRACE_MS passed)', 'AbortError'));
        await this.whenIdle();
      }
    }
    this.setMode('stopped');
  }

  private whenIdle(): Promise<void> {
    if (this.running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private setMode(next: LeaseQueueMode): void {
    const allowed: Record<LeaseQueueMode, LeaseQueueMode[]> = { running: ['draining'], draining: ['stopped'], stopped: [] };
    if (!allowed[this.mode].includes(next)) throw new Error(`lease queue: ${this.mode} → ${next} is not a valid change of mode`);
    this.mode = next;
  }

  /** Starts the account's waiting jobs while it has free slots. */
  private start(accountId: string): void {
    const list = this.queued.get(accountId);
    if (!list) return;
    if (this.mode !== 'running') {
      this.giveBack(accountId);
      return;
    }
    let running = this.runningPerAccount.get(accountId) ?? 0;
    while (list.length > 0 && running < list[0].job.maxInFlight) {
      const held = list.shift()!;
      this.queuedCount -= 1;
      const now = this.now();
      const { job } = held;
      if (job.publishBy && now > job.publishBy.getTime()) {
        // docs/delivery.md: reached after its publishBy, the job is dead as expired without an attempt.
        this.expired.push(ref(job));
        this.o.changed();
        continue;
      }
      if (held.heldUntil - now <= 2 * this.margin) {
        // Its lease could not be renewed for a while (the database is away): not ours for long enough to start.
        this.release.push(ref(job));
        this.o.changed();
        continue;
      }
      running += 1;
      this.launch(held, now);
    }
    this.runningPerAccount.set(accountId, running);
    if (list.length === 0) this.queued.delete(accountId);
  }

  private launch(held: Held, now: number): void {
    const { job } = held;
    const deadline = now + this.o.attemptTimeoutMs;
    const r: Running = {
      ...held,
      controller: new AbortController(),
      timer: null,
      deadline,
      renewUntil: deadline + this.o.leaseMs,
      overrunReported: false,
    };
    this.running.set(job.id, r);
    this.arm(r);
    const settle = (attempt: FinishedAttempt | null) => {
      if (r.timer) clearTimeout(r.timer);
      this.running.delete(job.id);
      this.runningPerAccount.set(job.accountId, (this.runningPerAccount.get(job.accountId) ?? 1) - 1);
      if (attempt) this.o.finished(attempt);
      // The freed slot goes to the account's next waiting job at once; after a failure they go
      // back instead, and the next round decides.
      if (attempt?.errorClass === 'success') this.start(job.accountId);
      else this.giveBack(job.accountId);
      this.o.changed();
      if (this.running.size === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    };
    this.o.run(job, r.controller.signal).then(settle, (err: unknown) => {
      // A bug (run never throws by contract). Not released: the request may have gone out, so the
      // lease expires and the crash recovery retries it, counting the attempt.
      this.o.warn(`the attempt of job ${job.id} failed without an outcome (${String(err)}); it will be retried when its lease expires`);
      settle(null);
    });
  }

  /** (Re)sets the attempt's timer to the first of its deadline and its lease's safe end. */
  private arm(r: Running): void {
    if (r.controller.signal.aborted) return;
    if (r.timer) clearTimeout(r.timer);
    const leaseEnd = r.heldUntil - this.margin;
    const at = Math.min(r.deadline, leaseEnd);
    r.timer = setTimeout(
      () => {
        r.timer = null;
        const reason =
          at === r.deadline
            ? `the attempt used its whole time budget (WORKER_ATTEMPT_TIMEOUT_MS, ${this.o.attemptTimeoutMs} ms)`
            : 'the attempt was stopped before its lease ran out: the lease could not be renewed (the database is unreachable)';
        r.controller.abort(new DOMException(reason, 'TimeoutError'));
      },
      Math.max(0, at - this.now()),
    );
    r.timer.unref?.();
  }
}

function ref(job: ClaimedJob): LeasedJobRef {
  return { id: job.id, attemptNumber: job.attemptNumber };
}
