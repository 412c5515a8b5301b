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
 */
export class Periodic {
  private timer: NodeJS.Timeout | null = null;
  private current: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly intervalMs: number,
    private readonly task: () => Promise<void>,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Starts the schedule; `now`: the first run right away, else after one interval. */
  start(now: boolean): void {
    if (this.stopped || this.timer || this.current) return;
    if (now) this.tick();
    else this.schedule();
  }

  /** Is a run in progress now. */
  get busy(): boolean {
    return this.current !== null;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.current;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  private tick(): void {
    this.timer = null;
    this.current = this.task()
      .catch((err: unknown) => this.onError(err))
      .finally(() => {
        this.current = null;
        this.schedule();
      });
  }
}
