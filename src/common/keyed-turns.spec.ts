import { KeyedTurns, Semaphore } from './keyed-turns';

const tick = () => new Promise((r) => setImmediate(r));

function gate(): { open: () => void; wait: Promise<void> } {
  let open = () => undefined as void;
  const wait = new Promise<void>((r) => (open = r));
  return { open, wait };
}

describe('KeyedTurns', () => {
  it('runs the turns of one key one after another, in order, and of other keys at once', async () => {
    const turns = new KeyedTurns(10);
    const log: string[] = [];
    const first = gate();
    const a1 = turns.run('a', async () => {
      log.push('a1 start');
      await first.wait;
      log.push('a1 end');
    });
    const a2 = turns.run('a', () => Promise.resolve(log.push('a2')));
    const b1 = turns.run('b', () => Promise.resolve(log.push('b1')));
    await tick();
    expect(log).toEqual(['a1 start', 'b1']);
    first.open();
    await Promise.all([a1, a2, b1]);
    expect(log).toEqual(['a1 start', 'b1', 'a1 end', 'a2']);
    await tick();
    expect(turns.busyKeys).toBe(0);
  });

  it('refuses a turn when maxWaiting are running or waiting for that key, and takes it again once they end', async () => {
    const turns = new KeyedTurns(2);
    const hold = gate();
    const running = [turns.run('a', () => hold.wait)!, turns.run('a', () => Promise.resolve())!];
    expect(turns.run('a', () => Promise.resolve())).toBeNull();
    expect(turns.run('b', () => Promise.resolve())).not.toBeNull();
    hold.open();
    await Promise.all(running);
    await tick();
    expect(await turns.run('a', () => Promise.resolve('again'))).toBe('again');
  });

  it('goes on with the next turn after one that threw', async () => {
    const turns = new KeyedTurns(5);
    const failed = turns.run('a', () => Promise.reject(new Error('boom')));
    const next = turns.run('a', () => Promise.resolve(7));
    await expect(failed).rejects.toThrow('boom');
    expect(await next).toBe(7);
  });
});

describe('Semaphore', () => {
  it('never runs more than its limit at once, and runs every waiter in order', async () => {
    const sem = new Semaphore(2);
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 7 }, (_, i) =>
        sem.use(async () => {
          running += 1;
          peak = Math.max(peak, running);
          await tick();
          order.push(i);
          running -= 1;
        }),
      ),
    );
    expect(peak).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('frees its slot when the work throws', async () => {
    const sem = new Semaphore(1);
    await expect(sem.use(() => Promise.reject(new Error('x')))).rejects.toThrow('x');
    expect(await sem.use(() => Promise.resolve('free'))).toBe('free');
  });
});
