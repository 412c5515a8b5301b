import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import * as os from 'node:os';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import type { ErrorClass } from '../retry/error-class';
import { accountFeedback } from './account-feedback';
import { AttemptRunner } from './attempt-runner';
import { planClaim } from './claim-plan';
import { QueueListener } from './queue-listener';
import { ClaimedJob, FinishedAttempt, QueueRepository, RoundResult } from './queue.repository';
import { WakeSchedule } from './wake-schedule';
import { WorkerMetrics } from './worker.metrics';

/** At most this many finished attempts are written per round. */
const FINISHED_BATCH = 500;
/**
 * Jobs leased per in-flight slot of an account: with 2, while 5 attempts of an account run,
 * 5 more wait in this process and start the moment a slot frees, instead of a database round
 * later. Queued jobs never outlive their lease: one attempt (bounded by HTTP_TOTAL_TIMEOUT_MS)
 * runs ahead of each, and the lease is longer than that.
 */
const PREFETCH = 2;

/**
 * The delivery loop of one process. It claims due jobs in batches (as many as it has free
 * slots), runs each attempt through its platform's connector, decides what happens next with
 * the pure retry policy, and records the outcomes in batches. Woken by LISTEN/NOTIFY, by a
 * timer set to the next due job, and by a poll interval that also reclaims expired leases
 * and expires deadlines. Several processes can run this against one database.
 *
 * A finished attempt is reported only once its outcome row has committed; until then its
 * job stays leased to this process, so a crash (kill -9) loses nothing: the lease expires
 * and another worker retries it with the same idempotency key.
 */
@Injectable()
export class WorkerService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Worker');
  readonly owner = `${os.hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly abort = new AbortController();
  private readonly running = new Set<Promise<void>>();
  private pending: FinishedAttempt[] = [];
  /** Leased jobs waiting for a free slot of their account, per account (see drain()). */
  private readonly queued = new Map<string, { job: ClaimedJob; at: number }[]>();
  private queuedCount = 0;
  /** Attempts running per account. */
  private readonly runningPerAccount = new Map<string, number>();
  /** Leased jobs to give back in the next round (their account failed, or we are stopping). */
  private toRelease: ClaimedJob[] = [];
  private pumping: Promise<void> | null = null;
  private pumpAgain = false;
  private wakeTimer: NodeJS.Timeout | null = null;
  private wakeTimerDue = 0;
  private readonly wakeTimes = new WakeSchedule();
  private pollTimer: NodeJS.Timeout | null = null;
  private stopping = false;
  private started = false;

  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly queue: QueueRepository,
    private readonly listener: QueueListener,
    private readonly metrics: WorkerMetrics,
    private readonly attempts: AttemptRunner,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.worker.enabled) return;
    this.start();
  }

  /** Starts the loop (called at bootstrap when WORKER_ENABLED; tests may call it). */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.listener.onWake((runAt) => this.wakeAt(runAt));
    // Disabled or deleted by a person: leased jobs of that account that have not started go back.
    this.listener.onAccountStopped((accountId) => {
      this.giveBack(accountId);
      this.kick();
    });
    void this.listener.start();
    this.pollTimer = setInterval(() => void this.maintain(), this.config.worker.pollIntervalMs);
    this.pollTimer.unref();
    void this.maintain();
  }


  /** SIGTERM: stop claiming, let attempts finish (bounded), record them, release the rest. */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.started || this.stopping) return;
    this.stopping = true;
    for (const accountId of [...this.queued.keys()]) this.giveBack(accountId);
    if (this.pollTimer) clearInterval(this.pollTimer);
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    await this.listener.stop();
    const grace = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), this.config.worker.shutdownGraceMs).unref());
    if ((await Promise.race([Promise.all(this.running).then(() => 'done' as const), grace])) === 'timeout') {
      this.logger.warn(`${this.running.size} attempts still running after ${this.config.worker.shutdownGraceMs} ms: aborting them`);
      this.abort.abort();
      await Promise.all(this.running);
    }
    // Record what finished (no claiming: `stopping` leaves no room).
    while (this.pending.length > 0 || this.toRelease.length > 0 || this.pumping) {
      if (!this.pumping) this.kick();
      await this.pumping;
    }
    this.logger.log('worker stopped');
  }

  private wakeAt(runAt: number): void {
    if (runAt - Date.now() <= 1) this.kick();
    else this.wakeAtTime(runAt);
  }

  /** Be awake at `at` (epoch ms): one timer, always set for the earliest known moment. */
  private wakeAtTime(at: number): void {
    if (this.stopping) return;
    this.wakeTimes.add(at);
    this.armWakeTimer();
  }

  private armWakeTimer(): void {
    const next = this.wakeTimes.next();
    if (next === undefined || this.stopping) return;
    if (this.wakeTimer && this.wakeTimerDue <= next) return;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimerDue = next;
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = null;
      this.wakeTimes.popDue(Date.now());
      this.kick();
      this.armWakeTimer();
    }, Math.max(0, next - Date.now()));
    this.wakeTimer.unref();
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
    this.pumping = this.pump()
      .catch((err: unknown) => this.logger.error(`worker round failed: ${String(err)}`))
      .finally(() => {
        this.pumping = null;
        if (this.pumpAgain) {
          this.pumpAgain = false;
          this.kick();
        }
      });
  }

  private async pump(): Promise<void> {
    const { batchSize, concurrency, leaseMs } = this.config.worker;
    let failures = 0;
    for (;;) {
      this.pumpAgain = false;
      const room = this.stopping ? 0 : Math.min(batchSize, concurrency - this.running.size - this.queuedCount);
      if (this.pending.length === 0 && this.toRelease.length === 0 && room <= 0) return; // a finishing attempt kicks again
      const finished = this.pending.splice(0, FINISHED_BATCH);
      const release = this.toRelease.splice(0);
      let round: RoundResult;
      const stop = this.metrics.roundSeconds.startTimer();
      try {
        round = await this.queue.round({
          owner: this.owner,
          finished,
          release,
          claimLimit: room,
          prefetch: PREFETCH,
          leaseMs,
          feedback: (accounts, attempts) => accountFeedback(accounts, attempts, this.config.circuit),
          plan: (candidates, slots, now) => planClaim(candidates, slots, now, room),
        });
        failures = 0;
      } catch (err) {
        // Outcomes are kept and written again: their jobs stay leased to us meanwhile, and if
        // this process dies their leases expire and they are retried (same idempotency key).
        this.pending.unshift(...finished);
        this.toRelease.unshift(...release);
        failures += 1;
        this.logger.error(`worker round failed (${failures}x), will retry: ${String(err)}`);
        if (this.stopping && failures >= 3) {
          this.logger.error(`giving up on ${this.pending.length} outcomes at shutdown; their leases will expire and they will be retried`);
          this.pending = [];
          this.toRelease = [];
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 500));
        continue;
      } finally {
        stop();
      }
      if (round.recorded.size < finished.length) {
        this.logger.warn(`${finished.length - round.recorded.size} outcomes were not recorded: their lease had expired and another worker took them`);
      }
      // Accounts this round found not active: their leased jobs that have not started go back.
      for (const accountId of round.notActive) this.giveBack(accountId);
      if (round.notActive.length > 0) {
        await this.queue.pauseWaitingJobs(round.notActive).catch((err: unknown) => this.logger.error(`pausing jobs failed: ${String(err)}`));
      }
      if (round.claimed.length > 0) await this.startAll(round.claimed);
      const full = room > 0 && round.claimed.length >= room;
      if (this.pending.length === 0 && this.toRelease.length === 0 && !full && !this.pumpAgain) break;
    }
    // Idle: sleep until the next scheduled job (retries this process scheduled, and jobs other
    // processes wrote while no NOTIFY reached us), at most a poll interval.
    if (!this.stopping && this.running.size === 0) {
      const next = await this.queue.nextRunAt();
      if (next) this.wakeAtTime(Math.min(next.getTime(), Date.now() + this.config.worker.pollIntervalMs));
    }
  }

  private async startAll(jobs: ClaimedJob[]): Promise<void> {
    await this.attempts.ensureAccounts(jobs);
    const accounts = new Set<string>();
    for (const job of jobs) {
      const entry = { job, at: Date.now() };
      const list = this.queued.get(job.accountId);
      if (list) list.push(entry);
      else this.queued.set(job.accountId, [entry]);
      this.queuedCount += 1;
      accounts.add(job.accountId);
    }
    for (const id of accounts) this.drain(id);
  }

  /** Starts queued jobs of an account while it has free slots (at most its in-flight cap at once). */
  private drain(accountId: string): void {
    const list = this.queued.get(accountId);
    if (!list) return;
    if (this.stopping) {
      this.giveBack(accountId);
      return;
    }
    let running = this.runningPerAccount.get(accountId) ?? 0;
    // A queued job may start only while its lease still outlasts a whole attempt.
    const startBy = Date.now() - (this.config.worker.leaseMs - this.config.http.totalTimeoutMs - 1000);
    while (list.length > 0 && running < list[0]!.job.maxInFlight) {
      const { job, at } = list.shift()!;
      this.queuedCount -= 1;
      if (at < startBy) {
        this.toRelease.push(job);
        continue;
      }
      running += 1;
      const run = this.attempt(job)
        .then((errorClass) => errorClass === 'success')
        .catch((err: unknown) => {
          this.logger.error(`attempt of job ${job.id} failed unexpectedly: ${String(err)}`);
          return false;
        })
        .then((succeeded) => {
          this.running.delete(run);
          this.runningPerAccount.set(accountId, (this.runningPerAccount.get(accountId) ?? 1) - 1);
          this.metrics.inFlight.set(this.running.size);
          // The freed slot goes to the account's next queued job at once; after a failure the
          // queued ones go back instead, and the next round decides.
          if (succeeded) this.drain(accountId);
          else this.giveBack(accountId);
          this.kick();
        });
      this.running.add(run);
    }
    this.runningPerAccount.set(accountId, running);
    if (list.length === 0) this.queued.delete(accountId);
    this.metrics.inFlight.set(this.running.size);
  }

  /**
   * The account's queued jobs go back to the database unattempted (in the next round): after
   * a failed attempt the round decides (circuit breaker, needs_reauth, disable) before anything
   * else is sent to that account, exactly as if nothing had been queued.
   */
  private giveBack(accountId: string): void {
    const list = this.queued.get(accountId);
    if (!list) return;
    this.queued.delete(accountId);
    this.queuedCount -= list.length;
    this.toRelease.push(...list.map((q) => q.job));
  }

  private async attempt(job: ClaimedJob): Promise<ErrorClass> {
    const finished = await this.attempts.run(job, this.abort.signal);
    this.pending.push(finished);
    // A retry this process scheduled: be awake when it is due.
    if (finished.decision === 'retry' && finished.delayMs !== null) this.wakeAtTime(finished.finishedAt.getTime() + finished.delayMs);
    return finished.errorClass;
  }

  /** Every poll interval: crash recovery, deadlines, and a claim in case a wake-up was missed. */
  private async maintain(): Promise<void> {
    if (this.stopping) return;
    try {
      const reclaimed = await this.queue.reclaimExpiredLeases(this.config.retry.maxAttempts);
      if (reclaimed > 0) this.logger.warn(`reclaimed ${reclaimed} jobs whose worker stopped (lease expired)`);
      await this.queue.expireDeadlines();
    } catch (err) {
      this.logger.error(`queue maintenance failed: ${String(err)}`);
    }
    this.kick();
  }
}

