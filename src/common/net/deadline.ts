import { setMaxListeners } from 'node:events';

/**
 * Why an outgoing request was stopped by the caller's AbortSignal, and how an attempt's deadline
 * is told apart from any other stop (a shutdown).
 *
 * An attempt's signal fires at the attempt's deadline (ahead of its lease) or when the worker
 * shuts down past its grace period. Both end every HTTP call of the attempt at once, but they
 * mean different things to a person reading the attempt history, so they get different codes:
 * - `attempt_deadline`: the signal's reason is a timeout — `AbortSignal.timeout(ms)` (a
 *   DOMException named TimeoutError), an `AbortSignal.any([...])` that one of those ended, or
 *   `attemptDeadlineReason()`;
 * - `aborted`: anything else (a plain `controller.abort()`).
 */

export const ATTEMPT_DEADLINE = 'attempt_deadline';
export const ABORTED = 'aborted';

/** The reason to pass to `controller.abort(reason)` when an attempt reaches its deadline. */
export function attemptDeadlineReason(): Error {
  const err = new Error('the attempt reached its deadline');
  err.name = 'TimeoutError';
  return err;
}

function isDeadline(reason: unknown): boolean {
  if (typeof reason !== 'object' || reason === null) return false;
  const { name, code } = reason as { name?: unknown; code?: unknown };
  return name === 'TimeoutError' || code === ATTEMPT_DEADLINE;
}

/** `attempt_deadline` or `aborted`, from an aborted signal's reason. */
export function abortCode(signal: AbortSignal): string {
  return isDeadline(signal.reason) ? ATTEMPT_DEADLINE : ABORTED;
}

/**
 * A failure of an outgoing request that a caller throws (the fetch adapter, a wait cut short by
 * the attempt's signal). `code` uses the same names as `HttpNetworkError.code`.
 */
export class OutboundError extends Error {
  constructor(
    readonly code: string,
    message: string,
    /** Whether the request may have reached the server. */
    readonly sent: boolean,
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}

/** The error a wait cut short by `signal` rejects with. */
export function abortError(signal: AbortSignal, sent = false): OutboundError {
  const code = abortCode(signal);
  return new OutboundError(code, code === ATTEMPT_DEADLINE ? 'the attempt reached its deadline' : 'stopped by Herald', sent);
}

/**
 * `promise`, or a rejection with `abortError(signal)` as soon as the signal fires, whichever
 * comes first. The promise itself goes on (it may be shared by other callers, like a session
 * login several attempts wait for); only this caller stops waiting for it.
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(abortError(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      promise.catch(() => undefined);
      reject(abortError(signal));
    };
    // One attempt's signal is shared by all its calls (and the shutdown signal by every attempt):
    // each listener goes when its wait ends, so many at once is not a leak.
    setMaxListeners(0, signal);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passes the awaited promise's own rejection on unchanged
        reject(err);
      },
    );
  });
}
