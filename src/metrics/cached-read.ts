/**
 * A read that scrapes share: its value is reused for `maxAgeMs` after the read started, and
 * scrapes that arrive while a read is running wait for that read instead of starting their own.
 * So the database work of the gauges is bounded by the refresh interval, not by how often (or by
 * how many Prometheus servers) /metrics is scraped. A failed read is not cached.
 */
export class CachedRead<T> {
  private last: { startedAt: number; value: T } | null = null;
  private running: Promise<T> | null = null;

  constructor(
    private readonly load: () => Promise<T>,
    private readonly maxAgeMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(): Promise<T> {
    const now = this.now();
    if (this.last !== null && now - this.last.startedAt < this.maxAgeMs) return Promise.resolve(this.last.value);
    if (this.running !== null) return this.running;
    const read = this.load().then(
      (value) => {
        this.last = { startedAt: now, value };
        this.running = null;
        return value;
      },
      (err: unknown) => {
        this.running = null;
        throw err;
      },
    );
    this.running = read;
    return read;
  }
}
