import { getEventListeners } from 'node:events';
import { abortCode, attemptDeadlineReason, OutboundError, untilAborted } from './deadline';

describe('abortCode', () => {
  it('calls a timeout an attempt deadline, however the worker builds its signal', async () => {
    const timeout = AbortSignal.timeout(1);
    await new Promise((r) => setTimeout(r, 20));
    expect(abortCode(timeout)).toBe('attempt_deadline');

    const shutdown = new AbortController();
    const combined = AbortSignal.any([shutdown.signal, AbortSignal.timeout(1)]);
    await new Promise((r) => setTimeout(r, 20));
    expect(abortCode(combined)).toBe('attempt_deadline');

    const explicit = new AbortController();
    explicit.abort(attemptDeadlineReason());
    expect(abortCode(explicit.signal)).toBe('attempt_deadline');
  });

  it('calls any other abort (shutdown) aborted', () => {
    const plain = new AbortController();
    plain.abort();
    expect(abortCode(plain.signal)).toBe('aborted');
    const reason = new AbortController();
    reason.abort(new Error('shutting down'));
    expect(abortCode(reason.signal)).toBe('aborted');
  });
});

describe('untilAborted', () => {
  it('passes the value through when the signal does not fire', async () => {
    const signal = new AbortController().signal;
    await expect(untilAborted(Promise.resolve(7), signal)).resolves.toBe(7);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it('stops waiting at the signal without cancelling the shared work', async () => {
    let finish!: (v: string) => void;
    const shared = new Promise<string>((resolve) => (finish = resolve));
    const controller = new AbortController();
    const waiting = untilAborted(shared, controller.signal);
    controller.abort(attemptDeadlineReason());
    await expect(waiting).rejects.toMatchObject({ code: 'attempt_deadline' });
    await expect(waiting).rejects.toBeInstanceOf(OutboundError);
    // Another waiter without a deadline still gets the result.
    const other = untilAborted(shared, undefined);
    finish('logged in');
    await expect(other).resolves.toBe('logged in');
  });

  it('rejects at once on a signal that already fired, and does not leave the work unhandled', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(untilAborted(Promise.reject(new Error('login failed')), controller.signal)).rejects.toMatchObject({ code: 'aborted' });
  });
});
