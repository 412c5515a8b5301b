import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import * as os from 'node:os';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { isConnectionError } from '../database/db';
import { accountFeedback } from './account-feedback';
import { AttemptRunner } from './attempt-runner';
import { planClaim } from './claim-plan';
import { LeaseQueue } from './lease-queue';
import { QueueListener } from './queue-listener';
import { QueueNotifier } from '../queue/queue-notifier';
import { JobStore } from '../queue/job-store.service';
import type { ClaimedJob, FinishedAttempt, RoundAccounts, RoundResult, SlowStart } from '../queue/queue.types';
import { AccountStateService } from '../account-state/account-state.service';
import { Background, Periodic, SelfTimed } from '../common/background';
import { nextMaintenanceMs } from './maintenance-plan';
import { WakeTimer } from './wake-timer';
import { assertModeChange, WorkerMode } from './worker-mode';
import { WorkerMetrics } from './worker.metrics';

/** At most this many finished attempts are written per round. */
const FINISHED_BATCH = 500;
/**
 * Jobs leased per in-flight slot of an account: with 2, while 5 attempts of an account run,
 * 5 more wait in this process and start the moment a slot frees, instead of a database round
 * later (measured +41 % deliveries/s). Waiting jobs keep their leases: they are renewed.
 */
const PREFETCH = 2;
/** Wait between two failed rounds (the database is away): short, so service resumes promptly. */
const ROUND_RETRY_MS = 500;

/**
 * The delivery loop of one process: rounds (record what finished + claim what fits, one
 * transaction: JobStore.round), the jobs it holds (LeaseQueue: per-account slots,
 * deadlines), wake-ups (WakeTimer, LISTEN/NOTIFY) and the queue's maintenance: crash recovery
 * and the deadline sweep, every poll interval while at work, and when idle at the moments the
 * queue names (a lease that may expire, a publishBy) or at the latest a safety sweep later
 * (maintenance-plan.ts): an idle worker does not poll. Leases of held jobs are renewed every
 * third of a lease. Several processes can run this against one database.
 *
 * A finished attempt is reported only once its outcome row has committed; until then its job
 * stays leased to this process, so a crash (kill -9) loses nothing: the lease expires and
 * another worker retries it with the same idempotency key. A database that goes away (restart,
 * pg_terminate_backend) loses nothing either: rounds fail and are retried every 500 ms with the
 * outcomes kept in memory, attempts running stop before their leases could lapse, and the
 * listener reconnects.
 */
@Injectable()
export class WorkerService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Worker');
  readonly owner = `${os.hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly leases: LeaseQueue;
  private readonly roundAccounts: RoundAccounts;
  private readonly slowStart: SlowStart;
  private readonly wakeTimer = new WakeTimer(() => this.kick());
  private pending: FinishedAttempt[] = [];
  /** The outcomes the round in flight is writing. */
  private recording: FinishedAttempt[] = [];
  private pumping: Promise<void> | null = null;
  private pumpAgain = false;
  private mode: WorkerMode = 'idle';
  /** Promises started and not awaited at once (the listener, the renewal of waiting outcomes, pumps): shutdown waits for them. */
  private readonly background = new Background((err) => this.logger.error(`worker background work failed: ${String(err)}`));
  /** Crash recovery and the deadline sweep, planned by each run for the next (maintenance-plan.ts); never two at once. */
  private readonly maintenance: SelfTimed;
  /** The leases this process holds, renewed every third of a lease; never two renewals at once. */
  private readonly renewal: Periodic;

  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly queue: JobStore,
    private readonly listener: QueueListener,
    private readonly metrics: WorkerMetrics,
    private readonly attempts: AttemptRunner,
    private readonly notifier: QueueNotifier,
    accountState: AccountStateService,
  ) {
    this.slowStart = { rampMs: config.worker.slowStartMs, ratePerS: config.worker.slowStartRatePerS };
    this.roundAccounts = {
      lock: (tx, ids) => accountState.lockForRound(tx, ids),
      applyFeedback: (tx, decided) => accountState.applyFeedback(tx, decided),
      startProbes: (tx, ids, leaseMs) => accountState.startProbes(tx, ids, leaseMs),
      countSlowStartLeases: (tx, leased) => accountState.countSlowStartLeases(tx, leased),
      storeRefreshedCredentials: (tx, updates) => accountState.storeRefreshedCredentials(tx, updates),
    };
    this.leases = new LeaseQueue({
      concurrency: config.worker.concurrency,
      leaseMs: config.worker.leaseMs,
      attemptTimeoutMs: config.worker.attemptTimeoutMs,
      run: (job, signal) => this.attempts.run(job, signal),
      finished: (attempt) => this.finished(attempt),
      changed: () => this.kick(),
      warn: (message) => this.logger.warn(message),
    });
    const logged = (what: string) => (err: unknown) => this.logger.error(`${what} failed: ${String(err)}`);
    this.maintenance = new SelfTimed(() => this.maintain(), logged('queue maintenance'), config.worker.pollIntervalMs);
    this.renewal = new Periodic(Math.max(100, Math.floor(config.worker.leaseMs / 3)), () => this.renew(), logged('lease renewal'));
  }

  private setMode(next: WorkerMode): void {
    this.mode = assertModeChange(this.mode, next);
  }

  onApplicationBootstrap(): void {
    if (!this.config.worker.enabled) return;
    this.start();
  }

  /** Starts the loop (called at bootstrap when WORKER_ENABLED; tests may call it). */
  start(): void {
    if (this.mode !== 'idle') return;
    this.setMode('running');
    this.listener.onWake((runAt) => this.wakeTimer.at(runAt));
    // Posts created by this process: woken directly, before the (folded) NOTIFY comes back.
    this.notifier.onJobsAdded((runAt) => this.wakeTimer.at(runAt));
    // Disabled or deleted by a person: waiting jobs of that account go back, its credentials leave memory.
    this.listener.onAccountStopped((accountId) => {
      this.attempts.forget(accountId);
      this.leases.giveBack(accountId);
    });
    // The first maintenance once the listener is up (or has failed): it plans the next by
    // whether NOTIFYs reach this worker (maintenance-plan.ts).
    this.background.run(this.listener.start().finally(() => this.maintenance.start()));
    this.renewal.start(false);
  }

  /** SIGTERM: stop claiming, let attempts finish (bounded), record them, release the rest. */
  async beforeApplicationShutdown(): Promise<void> {
    if (this.mode === 'idle') this.setMode('stopped');
    if (this.mode !== 'running') return;
    this.setMode('draining');
    await this.maintenance.stop();
    this.wakeTimer.stop();
    await this.listener.stop();
    await this.leases.drain(this.config.worker.shutdownGraceMs);
    // Record what finished and give back the rest (no claiming: draining leaves no room).
    for (let failures = 0; this.pending.length > 0 || this.leases.hasReturns || this.pumping;) {
      if (!this.pumping) this.kick();
      await this.pumping;
      if (this.pending.length > 0 || this.leases.hasReturns) failures += 1;
      if (failures >= 3) {
        this.logger.error(`giving up on ${this.pending.length} outcomes at shutdown; their leases will expire and they will be retried`);
        break;
      }
    }
    // Leases were renewed while attempts drained; now nothing of ours is left running.
    await this.renewal.stop();
    await this.background.settled();
    this.setMode('stopped');
    this.logger.log('worker stopped');
  }

  /**
   * Runs rounds (record what finished + claim what fits) until there is nothing to record and
   * no room or no due work left. One pump at a time per process; a kick during a round makes
   * the pump go on with whatever finished meanwhile, which is what batches the writes.
   */
  kick(): void {
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.metrics.workStarted();
    this.pumping = this.pump()
      .catch((err: unknown) => this.logger.error(`worker round failed: ${String(err)}`))
      .finally(() => {
        this.pumping = null;
        if (this.pumpAgain && this.mode === 'running') {
          this.pumpAgain = false;
          this.kick();
        }
      });
    this.background.run(this.pumping);
  }

  private finished(attempt: FinishedAttempt): void {
    this.pending.push(attempt);
    this.metrics.inFlight.set(this.leases.runningCount);
    // A retry this process scheduled: be awake when it is due.
    if (attempt.decision === 'retry' && attempt.delayMs !== null) this.wakeTimer.at(attempt.finishedAt.getTime() + attempt.delayMs);
  }

  private async pump(): Promise<void> {
    const { batchSize, leaseMs } = this.config.worker;
    // The next scheduled run_at as the last round saw it (undefined: that round did not read it).
    let nextRunAt: Date | null | undefined;
    for (;;) {
      this.pumpAgain = false;
      const room = this.mode === 'running' ? Math.min(batchSize, this.leases.room) : 0;
      if (this.pending.length === 0 && !this.leases.hasReturns && room <= 0) return; // a finishing attempt kicks again
      const finished = this.pending.splice(0, FINISHED_BATCH);
      this.recording = finished;
      const returns = this.leases.takeReturns();
      const sentAt = Date.now();
      let round: RoundResult;
      const stop = this.metrics.roundSeconds.startTimer();
      try {
        round = await this.queue.round({
          owner: this.owner,
          finished,
          release: returns.release,
          expired: returns.expired,
          claimLimit: room,
          prefetch: PREFETCH,
          slowStart: this.slowStart,
          leaseMs,
          // Cooldowns are jittered like retries (RETRY_JITTER=none turns both off, for comparison).
          feedback: (accounts, attempts) =>
            accountFeedback(accounts, attempts, this.config.circuit, this.config.retry.jitter === 'none' ? () => 0 : Math.random),
          plan: (candidates, slots, now) => planClaim(candidates, slots, now, room, this.slowStart),
          accounts: this.roundAccounts,
          // Nothing runs: if this round claims nothing either, the worker goes idle and sleeps
          // until the next scheduled job, which this round reads with its claim.
          nextRunAt: this.leases.runningCount === 0,
        });
      } catch (err) {
        // Outcomes are kept and written again: their jobs stay leased to us meanwhile (renew()
        // covers them as soon as the database answers again), and if this process dies their
        // leases expire and they are retried (same idempotency key).
        this.pending.unshift(...finished);
        this.leases.restore(returns);
        this.logger.error(`worker round failed, will retry: ${isConnectionError(err) ? 'the database is unavailable' : String(err)}`);
        if (this.mode !== 'running') return;
        await new Promise((resolve) => setTimeout(resolve, ROUND_RETRY_MS));
        continue;
      } finally {
        stop();
        this.recording = [];
      }
      nextRunAt = round.nextRunAt;
      // Event deliveries written by this round (docs/events.md) are due now: this worker claims
      // them in its next round, other processes are woken the way a new post wakes them.
      if (round.eventsWritten > 0) this.notifier.jobsAdded(new Date());
      // An account in its slow start whose rate budget grows then (its next job may be leased).
      if (round.wakeAt) this.wakeTimer.at(round.wakeAt.getTime());
      this.reportLate(finished, round);
      // Accounts this round found not active: their leased jobs that have not started go back.
      for (const accountId of round.notActive) this.leases.giveBack(accountId);
      if (round.notActive.length > 0) {
        await this.queue
          .pauseWaitingJobs(round.notActive)
          .catch((err: unknown) => this.logger.error(`pausing jobs failed: ${String(err)}`));
      }
      if (round.claimed.length > 0) await this.hold(round.claimed, sentAt);
      const full = room > 0 && round.claimed.length >= room;
      if (this.pending.length === 0 && !this.leases.hasReturns && !full && !this.pumpAgain) break;
    }
    // Idle: sleep until the next scheduled job (retries this process scheduled, and jobs other
    // processes wrote while no NOTIFY reached us). Read by the last round with its claim when it
    // could (see JobStore.round), else now. What no run_at announces (due jobs no claim could
    // take, leases that may expire) is the maintenance's to plan.
    if (this.mode === 'running' && this.leases.runningCount === 0) {
      const next = nextRunAt !== undefined ? nextRunAt : await this.queue.nextRunAt();
      if (next) this.wakeTimer.at(next.getTime());
    }
  }

  /** Claimed jobs start once their accounts' credentials are at hand; without them, they go back unattempted. */
  private async hold(jobs: ClaimedJob[], sentAt: number): Promise<void> {
    try {
      await this.attempts.ensureAccounts(jobs);
    } catch (err) {
      this.logger.error(`could not read the accounts of ${jobs.length} claimed jobs (${String(err)}): giving them back`);
      this.leases.refuse(jobs);
      return;
    }
    this.leases.add(jobs, sentAt);
    this.metrics.inFlight.set(this.leases.runningCount);
    // At work: the maintenance runs every poll interval again (maintenance-plan.ts).
    this.maintenance.within(this.config.worker.pollIntervalMs);
  }

  /** Outcomes whose lease was lost: successes were kept by the round; failures are said here. */
  private reportLate(finished: FinishedAttempt[], round: RoundResult): void {
    for (const a of finished) {
      if (round.recorded.has(a.jobId)) continue;
      if (round.recordedLate.has(a.jobId)) {
        this.logger.warn(`job ${a.jobId}: its attempt ${a.attemptNumber} succeeded after its lease was lost; recorded late as succeeded`);
      } else {
        this.logger.warn(
          `job ${a.jobId}: the outcome of attempt ${a.attemptNumber} (${a.errorClass}) came back after its lease was lost; ` +
            `the job was taken over, and the lost attempt is in its history as worker_lost`,
        );
      }
    }
  }

  /**
   * Every third of a lease: the leases of every job this process holds are pushed forward, those
   * of its outcomes not yet written included (a success waiting behind a slow round is still
   * ours: taken over, it would be sent again).
   */
  private async renew(): Promise<void> {
    const { leaseMs } = this.config.worker;
    // Outcomes of a round already sent are left out: that round may hold their rows locked, and
    // it ends their leases itself. Those still waiting go in a statement of their own, so a lock
    // on one of them can never hold back the renewal of running attempts.
    const waiting = this.pending.map((a) => a.jobId);
    if (waiting.length > 0) {
      this.background.run(
        this.queue.extendLeases(this.owner, waiting, leaseMs).catch((err: unknown) => {
          this.logger.warn(
            `renewing the leases of ${waiting.length} outcomes not yet written failed: ${isConnectionError(err) ? 'the database is unavailable' : String(err)}`,
          );
        }),
      );
    }
    const scope = this.leases.renewal();
    if (scope.ids.length === 0) return;
    const sentAt = Date.now();
    try {
      this.leases.renewed(scope, await this.queue.extendLeases(this.owner, scope.ids, leaseMs), sentAt);
    } catch (err) {
      // Running attempts stop before their last known lease ends (LeaseQueue): nothing runs unleased.
      this.logger.warn(
        `renewing ${scope.ids.length} leases failed: ${isConnectionError(err) ? 'the database is unavailable' : String(err)}`,
      );
    }
  }

  /** Jobs this process's own crash recovery must not take: held, or with an outcome not yet written. */
  private ownJobIds(): string[] {
    return [...this.leases.heldIds(), ...this.pending.map((a) => a.jobId), ...this.recording.map((a) => a.jobId)];
  }

  /**
   * Crash recovery, stragglers of inactive accounts, deadlines, and a claim in case a wake-up was
   * missed; then the moments that plan the next run (maintenance-plan.ts). Resolves to the delay
   * until that run.
   */
  private async maintain(): Promise<number> {
    const { pollIntervalMs, sweepIntervalMs } = this.config.worker;
    if (this.mode !== 'running') return sweepIntervalMs;
    try {
      const { reclaimed, eventsWritten } = await this.queue.reclaimExpiredLeases(
        this.config.retry.maxAttempts,
        this.owner,
        this.ownJobIds(),
      );
      if (reclaimed > 0) this.logger.warn(`reclaimed ${reclaimed} jobs whose worker stopped (lease expired)`);
      const paused = await this.queue.pauseStragglers();
      if (paused > 0) this.logger.log(`paused ${paused} waiting jobs of accounts that are not active (accepted as the account changed)`);
      const expired = await this.queue.expireDeadlines();
      if (eventsWritten + expired.eventsWritten > 0) this.notifier.jobsAdded(new Date());
    } catch (err) {
      this.logger.error(`queue maintenance failed: ${isConnectionError(err) ? 'the database is unavailable' : String(err)}`);
    }
    this.kick();
    const moments = await this.queue.dueMoments().catch(() => null);
    const busy = this.leases.heldIds().length > 0 || this.pending.length > 0 || this.recording.length > 0;
    return nextMaintenanceMs({ busy, listening: this.listener.state === 'listening', moments }, pollIntervalMs, sweepIntervalMs);
  }
}
