import { Injectable, Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { KeyedTurns } from '../common/keyed-turns';
import type { EmbeddedRead } from '../database/statement';
import { checkThrottle, FREE_FAILURES, recordFailure, ThrottleState, WINDOW_MS } from './login-throttle';
import { LoginThrottleRepository } from './login-throttle.repository';

/** What a credential check said: right (with what it opened) or wrong (with the refusal to pass on). */
export type CheckResult<T> = { ok: true; value: T } | { ok: false; refusal: unknown };

/**
 * A credential check. A cheap one (`expensive: false`) is handed the count's read to carry in its
 * own statement (database/statement.ts EmbeddedRead: the key and its count in one round trip); a
 * check that ignores it costs a second round trip after it. An expensive one is handed null: its
 * turn reads the count first.
 */
export type Check<T> = (read: EmbeddedRead | null) => Promise<CheckResult<T>>;

export type ThrottledOutcome<T> =
  { kind: 'ok'; value: T } | { kind: 'refused'; refusal: unknown } | { kind: 'throttled'; retryAfterMs: number };

export interface ThrottledCheck {
  /**
   * The counts a wrong try adds to, each a key: the client's address first (its turns are taken
   * here), then a login address (`address:<sha256>`) or a person (`person:<id>`).
   */
  keys: string[];
  /** The counts a right try clears: only what it proves (a password proves its address's count). */
  clears: string[];
  /**
   * Always take the client's turn (a password: argon2 costs ~100 ms of a thread), or only once
   * the client's count is at the free tries' end (a key: a SHA-256 and an indexed read).
   */
  expensive: boolean;
}

/** Turns waiting per client in this process before the next request is told to come back. */
const MAX_WAITING_PER_CLIENT = 64;
/** A full queue of turns answers 429 with this wait. */
const BUSY_RETRY_MS = 1_000;
/**
 * A blocked client with more than this many requests open at once is flooding: its 429s are held
 * for up to TARPIT_MS (at most the rest of its block), so each of its connections costs the
 * service a timer a second instead of a request every millisecond. A client sending one request
 * at a time gets its 429 at once.
 */
const TARPIT_ABOVE = 2;
const TARPIT_MS = 1_000;
/** Quiet counts are deleted at most this often per process, when a failure is written. */
const PURGE_EVERY_MS = 60_000;
/** A compare-and-set that lost to another process reads again, at most this many times. */
const CAS_TRIES = 8;

/**
 * The slow-down of wrong API keys and passwords (login-throttle.ts decides how long; this
 * decides what is counted and keeps the service whole under a flood).
 *
 * What is counted: every wrong key or password per client address (the page's key and password
 * logins and the API's Bearer keys together, so guessing on /v1 does not get around the page);
 * a wrong password also per login address (`address:` + its SHA-256, so spreading guesses over
 * many clients does not help); a wrong current password on the profile page per person. A
 * success clears only the count it proves: a right password clears its login address's count,
 * a right current password its person's; nothing clears a client address's count but 15 quiet
 * minutes (WINDOW_MS), so a valid key sent between guesses does not buy more guesses.
 *
 * How it stays cheap under a flood (issue: one client took the service down):
 * - No transaction and no row lock around a check: the count is read, the check runs with no
 *   connection held, a wrong try is written by compare-and-set (login-throttle.repository.ts).
 * - A client flooding (several requests open at once) while blocked is answered from memory,
 *   with no database at all, until the block this process saw ends.
 * - A suspect client's checks (every password; keys once the free tries are used) take turns in
 *   memory per client (KeyedTurns): each sees the count the previous one wrote, so 40 parallel
 *   guesses get one look, and the 41st waiting request is told to come back (429).
 * - A client whose count is below FREE_FAILURES (everyone, nearly always) is not serialized:
 *   its key check carries the count's read in its own statement, one round trip.
 * - A blocked client with several requests open gets its 429s late (TARPIT_MS): a flood on 40
 *   connections sends 40 requests a second, not thousands, and leaves the event loop to others.
 */
@Injectable()
export class LoginThrottleService {
  private readonly logger = new Logger('LoginThrottle');
  /** Blocks this process has seen: key → the end of the block (ms since the epoch). */
  private readonly blocks = new LRUCache<string, number>({ max: 10_000 });
  private readonly turns = new KeyedTurns(MAX_WAITING_PER_CLIENT);
  /** Requests under way per client address in this process (the tarpit's measure of a flood). */
  private readonly open = new Map<string, number>();
  private lastPurgeAt = 0;

  constructor(private readonly throttles: LoginThrottleRepository) {}

  /**
   * Runs `check` under the counts of `spec.keys`: refused at once while any of them is blocked
   * (the credential not even looked at), counted when wrong, clearing `spec.clears` when right.
   * `check` runs outside any transaction; errors other than a refusal are rethrown uncounted.
   */
  async attempt<T>(spec: ThrottledCheck, now: Date, check: Check<T>): Promise<ThrottledOutcome<T>> {
    const client = spec.keys[0];
    const open = (this.open.get(client) ?? 0) + 1;
    this.open.set(client, open);
    try {
      // Only a flood is answered from memory: a client sending one request at a time always
      // reads the count, so a count deleted by an operator frees it at once.
      const outcome = await this.decide(spec, now, check, open > TARPIT_ABOVE);
      if (outcome.kind === 'throttled' && open > TARPIT_ABOVE) await sleep(Math.min(outcome.retryAfterMs, TARPIT_MS));
      return outcome;
    } finally {
      const left = (this.open.get(client) ?? 1) - 1;
      if (left <= 0) this.open.delete(client);
      else this.open.set(client, left);
    }
  }

  private async decide<T>(spec: ThrottledCheck, now: Date, check: Check<T>, flooding: boolean): Promise<ThrottledOutcome<T>> {
    const cached = flooding ? this.cachedBlock(spec.keys, now) : 0;
    if (cached > 0) return { kind: 'throttled', retryAfterMs: cached };
    if (spec.expensive) return this.inTurn(spec, now, check, null);

    // The fast path: the count's read and the check at once, the read carried by the check's own
    // statement (one round trip). A check that could not carry it (it failed before its statement
    // answered) leaves it unread: it is read on its own, so a blocked client still learns nothing.
    const read = this.throttles.peekRead(spec.keys);
    const early = settle(check(read));
    await early;
    const states = read.states ?? (await this.throttles.peek(spec.keys));
    const blocked = this.blockIn(spec.keys, states, now);
    if (blocked > 0) {
      await early; // settled, its answer unseen: a blocked client learns nothing of its key
      return { kind: 'throttled', retryAfterMs: blocked };
    }
    const worst = Math.max(0, ...[...states.values()].map((s) => s.failures));
    if (worst >= FREE_FAILURES) return this.inTurn(spec, now, check, early);
    return this.conclude(spec, now, states, await early);
  }

  /** The turn of a suspect client: its checks one at a time, each after the last one's count. */
  private async inTurn<T>(
    spec: ThrottledCheck,
    now: Date,
    check: Check<T>,
    early: Promise<Settled<CheckResult<T>>> | null,
  ): Promise<ThrottledOutcome<T>> {
    const turn = this.turns.run(spec.keys[0], async (): Promise<ThrottledOutcome<T>> => {
      // A request that waited for its turn is one of several at once: the block the turn before
      // it wrote is in memory.
      const cached = (this.open.get(spec.keys[0]) ?? 0) > 1 ? this.cachedBlock(spec.keys, now) : 0;
      if (cached > 0) return { kind: 'throttled', retryAfterMs: cached };
      const states = await this.throttles.peek(spec.keys);
      const blocked = this.blockIn(spec.keys, states, now);
      if (blocked > 0) return { kind: 'throttled', retryAfterMs: blocked };
      return this.conclude(spec, now, states, await (early ?? settle(check(null))));
    });
    if (turn === null) {
      if (early) await early;
      return { kind: 'throttled', retryAfterMs: BUSY_RETRY_MS };
    }
    return turn;
  }

  private async conclude<T>(
    spec: ThrottledCheck,
    now: Date,
    states: Map<string, ThrottleState>,
    answer: Settled<CheckResult<T>>,
  ): Promise<ThrottledOutcome<T>> {
    if ('error' in answer) throw answer.error;
    const result = answer.value;
    if (result.ok) {
      // Only counts that exist are deleted: a right key with no count behind it writes nothing.
      const clears = spec.clears.filter((k) => states.has(k));
      if (clears.length > 0) {
        await this.throttles.clear(clears);
        for (const k of clears) this.blocks.delete(k);
      }
      return { kind: 'ok', value: result.value };
    }
    await Promise.all(spec.keys.map((key) => this.countFailure(key, states.get(key) ?? null, now)));
    await this.purgeNow(now);
    return { kind: 'refused', refusal: result.refusal };
  }

  /** One more wrong try on `key`, by compare-and-set from the state last read. */
  private async countFailure(key: string, seen: ThrottleState | null, now: Date): Promise<void> {
    let state = seen;
    for (let i = 0; i < CAS_TRIES; i++) {
      const next = recordFailure(state, now);
      if (await this.throttles.compareAndSet(key, state, next)) {
        if (next.blockedUntil && next.blockedUntil.getTime() > now.getTime()) this.blocks.set(key, next.blockedUntil.getTime());
        if (next.failures % 50 === 0) this.logger.warn(`${next.failures} wrong keys or passwords in a row for one client or address`);
        return;
      }
      state = (await this.throttles.peek([key])).get(key) ?? null;
    }
    // Eight writers in a row beat this one: the count is moving fast enough to block already.
    this.logger.warn(`a wrong try was not counted after ${CAS_TRIES} tries (the count kept changing)`);
  }

  /** Quiet counts go as failures are written (the only thing that adds rows), at most once a minute. */
  private async purgeNow(now: Date): Promise<void> {
    if (now.getTime() - this.lastPurgeAt < PURGE_EVERY_MS) return;
    this.lastPurgeAt = now.getTime();
    try {
      await this.throttles.purgeQuiet(new Date(now.getTime() - WINDOW_MS));
    } catch (err) {
      this.logger.warn(`purging quiet login counts failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** The longest wait among blocks this process has seen for these keys; 0 when none holds. */
  private cachedBlock(keys: string[], now: Date): number {
    let wait = 0;
    for (const key of keys) {
      const until = this.blocks.get(key);
      if (until !== undefined) wait = Math.max(wait, until - now.getTime());
    }
    return wait;
  }

  /** The longest wait among these counts at `now` (remembered for the next request); 0 when none blocks. */
  private blockIn(keys: string[], states: Map<string, ThrottleState>, now: Date): number {
    let wait = 0;
    for (const key of keys) {
      const decision = checkThrottle(states.get(key) ?? null, now);
      if (!decision.allowed) {
        wait = Math.max(wait, decision.retryAfterMs);
        this.blocks.set(key, now.getTime() + decision.retryAfterMs);
      }
    }
    return wait;
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type Settled<T> = { value: T } | { error: unknown };

function settle<T>(p: Promise<T>): Promise<Settled<T>> {
  return p.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
}
