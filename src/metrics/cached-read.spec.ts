import { CachedRead } from './cached-read';

/** A load whose calls are counted and whose answers the test releases by hand. */
function controlledLoad() {
  const pending: { resolve: (n: number) => void; reject: (e: Error) => void }[] = [];
  let calls = 0;
  return {
    load: () =>
      new Promise<number>((resolve, reject) => {
        calls += 1;
        pending.push({ resolve, reject });
      }),
    calls: () => calls,
    answer: (n: number) => pending.shift()!.resolve(n),
    fail: (message: string) => pending.shift()!.reject(new Error(message)),
  };
}

describe('CachedRead', () => {
  it('reuses a value until it is older than the refresh interval', async () => {
    let now = 1_000;
    let n = 0;
    const read = new CachedRead(
      () => Promise.resolve(++n),
      30_000,
      () => now,
    );
    expect(await read.get()).toBe(1);
    now += 29_999;
    expect(await read.get()).toBe(1);
    now += 1;
    expect(await read.get()).toBe(2);
  });

  it('lets scrapes that arrive during a read share it', async () => {
    const l = controlledLoad();
    const read = new CachedRead(l.load, 0);
    const many = Array.from({ length: 20 }, () => read.get());
    expect(l.calls()).toBe(1);
    l.answer(7);
    expect(await Promise.all(many)).toEqual(Array(20).fill(7));
    // With no reuse interval, the next scrape reads again.
    const next = read.get();
    expect(l.calls()).toBe(2);
    l.answer(8);
    expect(await next).toBe(8);
  });

  it('does not cache a failure: the next scrape tries again', async () => {
    const l = controlledLoad();
    const read = new CachedRead(l.load, 60_000);
    const first = read.get();
    l.fail('connection refused');
    await expect(first).rejects.toThrow('connection refused');
    const second = read.get();
    expect(l.calls()).toBe(2);
    l.answer(3);
    expect(await second).toBe(3);
  });
});
