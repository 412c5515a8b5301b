import { Background, Periodic } from './background';

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};

describe('Background', () => {
  it('settles only after every promise it was given, including ones added while waiting', async () => {
    const errors: unknown[] = [];
    const bg = new Background((e) => errors.push(e));
    const a = deferred();
    const b = deferred();
    bg.run(a.promise.then(() => bg.run(b.promise)));
    let settled = false;
    const done = bg.settled().then(() => (settled = true));
    a.resolve();
    await Promise.resolve();
    await Promise.resolve();
    expect(settled).toBe(false);
    b.resolve();
    await done;
    expect(bg.size).toBe(0);
    expect(errors).toEqual([]);
  });

  it('hands a failure to its error handler instead of leaving it unhandled', async () => {
    const errors: unknown[] = [];
    const bg = new Background((e) => errors.push(e));
    bg.run(Promise.reject(new Error('boom')));
    await bg.settled();
    expect(errors).toEqual([new Error('boom')]);
  });
});

describe('Periodic', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('never runs a task again while its previous run is still going', async () => {
    let running = 0;
    let most = 0;
    let runs = 0;
    const gates: (() => void)[] = [];
    const p = new Periodic(
      100,
      async () => {
        runs += 1;
        running += 1;
        most = Math.max(most, running);
        await new Promise<void>((r) => gates.push(r));
        running -= 1;
      },
      () => undefined,
    );
    p.start(true);
    await jest.advanceTimersByTimeAsync(1_000); // ten intervals pass while the first run hangs
    expect(runs).toBe(1);
    gates.shift()!();
    await jest.advanceTimersByTimeAsync(100);
    expect(runs).toBe(2);
    expect(most).toBe(1);
    const stopped = p.stop();
    gates.shift()!();
    await stopped;
  });

  it('stop() waits for the run in progress and cancels the next', async () => {
    const gate = deferred();
    let runs = 0;
    const p = new Periodic(
      50,
      async () => {
        runs += 1;
        await gate.promise;
      },
      () => undefined,
    );
    p.start(true);
    let stopped = false;
    const stopping = p.stop().then(() => (stopped = true));
    await jest.advanceTimersByTimeAsync(10);
    expect(stopped).toBe(false);
    gate.resolve();
    await stopping;
    await jest.advanceTimersByTimeAsync(500);
    expect(runs).toBe(1);
  });

  it('keeps its schedule after a run fails, and reports the failure', async () => {
    const errors: unknown[] = [];
    let runs = 0;
    const p = new Periodic(
      10,
      () => {
        runs += 1;
        return Promise.reject(new Error(`run ${runs}`));
      },
      (e) => errors.push(e),
    );
    p.start(false);
    await jest.advanceTimersByTimeAsync(35);
    await p.stop();
    expect(runs).toBe(3);
    expect(errors.map((e) => (e as Error).message)).toEqual(['run 1', 'run 2', 'run 3']);
  });
});
