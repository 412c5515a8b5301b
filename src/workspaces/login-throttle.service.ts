import { Injectable, Logger } from '@nestjs/common';
import { checkThrottle, recordFailure, ThrottleState } from './login-throttle';
import { LoginThrottleRepository } from './login-throttle.repository';

export type BearerOutcome<T> = { ok: true; value: T } | { ok: false; refused: unknown } | { ok: false; retryAfterMs: number };

/**
 * One count of wrong keys per client, in PostgreSQL (login-throttle.ts decides; every process
 * applies the same count): the settings page's logins (keys and passwords) and the API's
 * `Authorization: Bearer` keys count together, so a client cannot get around the page's
 * slow-down by guessing on /v1 instead.
 */
@Injectable()
export class LoginThrottleService {
  private readonly logger = new Logger('LoginThrottle');

  constructor(private readonly throttles: LoginThrottleRepository) {}

  withThrottle<T>(client: string, work: (state: ThrottleState) => Promise<{ result: T; next: ThrottleState | null }>): Promise<T> {
    return this.throttles.withThrottle(client, work);
  }

  withThrottles<T>(keys: string[], work: (states: ThrottleState[]) => Promise<{ result: T; next: (ThrottleState | null)[] }>): Promise<T> {
    return this.throttles.withThrottles(keys, work);
  }

  purgeQuiet(): Promise<void> {
    return this.throttles.purgeQuiet();
  }

  /**
   * An API request's key, checked under the client's count. `check` resolves the key or throws
   * `refusal` errors (a wrong key: counted) or anything else (not counted, rethrown).
   *
   * A client without recent wrong keys takes the fast path (one indexed read; no lock, no write
   * for a right key). A client with a count takes turns on its row, as page logins do: while it
   * is blocked every key is refused at once without being looked at, so parallel guesses gain
   * nothing; a right key clears the count. On the fast path, wrong keys sent in parallel before
   * the first one is counted each get an answer (at most the first burst), then the count holds.
   *
   * The read of the count and the key's lookup (both reads, no side effect) go out together, so
   * a request with a right key waits for one round trip, not two; for a client with a count the
   * early lookup's answer is dropped unseen and the key is looked at again under its row's turn.
   */
  async bearer<T>(client: string, now: Date, check: () => Promise<T>, isRefusal: (err: unknown) => boolean): Promise<BearerOutcome<T>> {
    const early = check().then(
      (value) => ({ value }),
      (err: unknown) => ({ err }),
    );
    const seen = await this.throttles.peek(client);
    if (seen === null || seen.failures === 0) {
      const answer = await early;
      if ('value' in answer) return { ok: true, value: answer.value };
      if (!isRefusal(answer.err)) throw answer.err;
      await this.throttles.withThrottle(client, (state) => Promise.resolve({ result: null, next: recordFailure(state, now) }));
      return { ok: false, refused: answer.err };
    }
    await early; // settled before the turn on the row; its answer is not used
    return this.throttles.withThrottle<BearerOutcome<T>>(client, async (state) => {
      const decision = checkThrottle(state, now);
      if (!decision.allowed) return { result: { ok: false, retryAfterMs: decision.retryAfterMs }, next: state };
      try {
        const value = await check();
        return { result: { ok: true, value }, next: null };
      } catch (err) {
        if (!isRefusal(err)) throw err;
        const next = recordFailure(state, now);
        if (next.failures % 50 === 0) this.logger.warn(`${next.failures} wrong API keys in a row from one client`);
        return { result: { ok: false, refused: err }, next };
      }
    });
  }
}
