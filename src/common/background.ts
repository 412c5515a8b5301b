/**
 * Work a loop starts and does not wait for right away (graphile-worker's `background()`): every
 * such promise is kept until it settles, so shutdown can wait for all of them instead of leaving
 * a statement or a listener half-done behind a closed pool. A failure goes to `onError`, never
 * unhandled.
 */
export class Background {
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly onError: (err: unknown) => void) {}

  run(work: Promise<unknown>): void {
    const tracked: Promise<void> = work
      .then(() => undefined)
      .catch((err: unknown) => this.onError(err))
      .finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
  }

  get size(): number {
    return this.pending.size;
  }

  /** Resolves once every promise started so far, and any they started meanwhile, has settled. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}

/**
 * A task run every `intervalMs` that never overlaps itself: the next run is timed from the end of
 * the previous one, so a slow run (the database is away, a sweep over many rows) delays the next
 * instead of piling a second one on top. `stop` cancels the next run and waits for the current.
 * A SelfTimed whose task always plans the same delay, a failed run included.
 */
export class Periodic {
  private readonly timed: SelfTimed;

  constructor(
    private readonly intervalMs: number,
    task: () => Promise<void>,
    onError: (err: unknown) => void,
  ) {
    this.timed = new SelfTimed(
      async () => {
        await task();
        return intervalMs;
      },
      onError,
      intervalMs,
    );
  }

  /** Starts the schedule; `now`: the first run right away, else after one interval. */
  start(now: boolean): void {
    if (now) this.timed.start();
    else this.timed.within(this.intervalMs);
  }

  stop(): Promise<void> {
    return this.timed.stop();
  }
}

/**
 * A task that plans its own next run: it resolves to the delay until then (ms). Like Periodic it
 * never overlaps itself and `stop` waits for the run in progress; `within` pulls the next run
 * closer (a run in progress keeps the earlier of the two plans), never further away.
 */
export class SelfTimed {
  private timer: NodeJS.Timeout | null = null;
  /** When the armed timer fires (epoch ms), or the closest `within` asked for during a run. */
  private due = Number.POSITIVE_INFINITY;
  private current: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly task: () => Promise<number>,
    private readonly onError: (err: unknown) => void,
    /** The delay after a run that failed. */
    private readonly retryMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Starts the schedule: the first run right away. */
  start(): void {
    if (this.stopped || this.timer || this.current) return;
    this.tick();
  }

  /** Run no later than `delayMs` from now. */
  within(delayMs: number): void {
    if (this.stopped) return;
    const at = this.now() + Math.max(0, delayMs);
    if (at >= this.due) return;
    this.due = at;
    if (this.current) return; // planned when the run ends
    this.arm();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.current;
  }

  private arm(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    // A Node timer holds at most 2^31 - 1 ms; a later run comes round through an earlier tick.
    this.timer = setTimeout(() => this.tick(), Math.min(2 ** 31 - 1, Math.max(0, this.due - this.now())));
    this.timer.unref();
  }

  private tick(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.due = Number.POSITIVE_INFINITY;
    this.current = this.task()
      .catch((err: unknown) => {
        this.onError(err);
        return this.retryMs;
      })
      .then((delayMs) => {
        this.current = null;
        this.due = Math.min(this.due, this.now() + Math.max(0, delayMs));
        this.arm();
      });
  }
}
