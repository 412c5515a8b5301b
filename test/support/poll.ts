/**
 * The one poll helper of the tests (graphile-worker's __tests__/helpers.ts keeps one too): read
 * something a user could see (a row, an API answer, a request at a receiver, a log line, a page)
 * until it shows the state a test waits for, or fail after a deadline with the last value read.
 *
 * Tests wait for the event that proves a state, never for a fixed time: a sleep is too short on a
 * loaded machine and too long on a quiet one, and before a "nothing happened" check it proves
 * nothing. Deadlines are generous on purpose (DEADLINE_MS): they are there to end a test that
 * went wrong with a useful message, not to measure speed (that is the benchmarks' job). On this
 * machine two jest workers share two cores with other engineers' test runs, and load averages of
 * 10 and more have been seen: a state that takes 1 s on a quiet machine can take 10 s then.
 */

/** The default deadline of a wait: 30 s, well past anything a passing test needs, and inside jest's 60 s test timeout. */
export const DEADLINE_MS = 30_000;
/** How often a wait reads again by default. */
export const EVERY_MS = 50;

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing read yet';
  const text = typeof value === 'string' ? value : (JSON.stringify(value) as string | undefined);
  return (text ?? typeof value).slice(0, 800);
}

/**
 * Reads `read()` every `everyMs` until `done(value)` holds and returns that value; after
 * `timeoutMs` it throws, naming `what` and the last value read. A read that throws ends the wait
 * with that error (a broken read is a failed test, not a state to wait out).
 */
export async function pollUntil<T>(
  what: string,
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = DEADLINE_MS,
  everyMs = EVERY_MS,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await read();
    if (done(last)) return last;
    if (Date.now() >= deadline) break;
    await sleep(Math.min(everyMs, deadline - Date.now()));
  }
  throw new Error(`${what} did not happen within ${timeoutMs} ms; last: ${describeValue(last)}`);
}

/** `pollUntil` for a yes/no check: resolves once `check()` is true. */
export async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  await pollUntil(what, check, (ok) => ok, timeoutMs);
}
