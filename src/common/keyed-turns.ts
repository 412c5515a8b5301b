/**
 * Work that takes turns per key inside this process, waiting in memory: nothing is held while a
 * caller waits (no database connection, no row lock), and at most `maxWaiting` callers wait per
 * key, so a client that opens a thousand connections queues a bounded number of them and the
 * rest are told to come back.
 *
 * The login throttle runs a suspect client's credential checks one after another with it: each
 * sees the count the previous one left, so parallel guesses gain nothing (login-throttle.service.ts).
 */
export class KeyedTurns {
  private readonly queues = new Map<string, { tail: Promise<void>; size: number }>();

  constructor(private readonly maxWaiting: number) {}

  /**
   * Runs `work` once every earlier turn of `key` has ended. Null (and `work` not run) when
   * `maxWaiting` turns of this key are already running or waiting.
   */
  run<T>(key: string, work: () => Promise<T>): Promise<T> | null {
    const queue = this.queues.get(key) ?? { tail: Promise.resolve(), size: 0 };
    if (queue.size >= this.maxWaiting) return null;
    queue.size += 1;
    this.queues.set(key, queue);
    const result = queue.tail.then(work);
    queue.tail = result.then(
      () => this.leave(key),
      () => this.leave(key),
    );
    return result;
  }

  /** Keys with a turn running or waiting (for tests and metrics). */
  get busyKeys(): number {
    return this.queues.size;
  }

  private leave(key: string): void {
    const queue = this.queues.get(key);
    if (!queue) return;
    queue.size -= 1;
    if (queue.size === 0) this.queues.delete(key);
  }
}

/**
 * At most `limit` of some expensive work at once in this process; the others wait in memory, in
 * order. Password checks use it (argon2 runs on libuv's pool of 4 threads, which DNS lookups and
 * file reads share): a flood of passwords, however many addresses it comes from, keeps threads
 * free for the rest of the service.
 */
export class Semaphore {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async use<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running += 1;
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter: `running` stays as it is.
      if (next) next();
      else this.running -= 1;
    }
  }
}
