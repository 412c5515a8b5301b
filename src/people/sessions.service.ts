import { Injectable, Logger } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { DomainError, ErrorCode, invalidInput } from '../common/errors';
import { ApiKeysService } from '../workspaces/api-keys.service';
import type { AuthContext } from '../workspaces/auth';
import { LoginThrottleService, ThrottledOutcome } from './login-throttle.service';
import { PeopleService } from './people.service';
import type { Flash, PageSession } from './session.types';
import { SessionRow, SessionsRepository } from './sessions.repository';

/** A session ends after this long without a request… */
export const IDLE_TIMEOUT_MS = 12 * 3_600_000;
/** …and at the latest this long after the login, however busy. */
export const ABSOLUTE_TIMEOUT_MS = 7 * 86_400_000;
/** The expiry is pushed forward at most this often (one write per 5 minutes of use, not per request). */
const EXTEND_EVERY_MS = 5 * 60_000;

export type LoginResult =
  | { ok: true; token: string; session: PageSession }
  | { ok: false; reason: 'refused' }
  | { ok: false; reason: 'throttled'; retryAfterMs: number };

/** The count of one login address (its SHA-256: the table holds no address in the clear). */
export const addressKey = (email: string): string =>
  `address:${createHash('sha256').update(email.trim().toLowerCase(), 'utf8').digest('hex')}`;

export const hashToken = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/**
 * Browser sessions of the settings page, kept in PostgreSQL: a random token in an httpOnly
 * cookie, its SHA-256 in `page_sessions`. The page (src/settings) keeps the cookie, the CSRF
 * checks and the guard; who is logged in, and the slow-down of wrong tries, are people's. A session is tied to the API key or the person it
 * was opened by and ends when that key is revoked or that person removed, when they log out (or
 * set a new password elsewhere), after 12 idle hours, or 7 days after the login.
 */
@Injectable()
export class SessionsService {
  private readonly logger = new Logger('SettingsSessions');

  constructor(
    private readonly sessions: SessionsRepository,
    private readonly apiKeys: ApiKeysService,
    private readonly people: PeopleService,
    private readonly throttle: LoginThrottleService,
  ) {}

  /**
   * Logs in with an API key. `client` is the caller's address: repeated wrong keys from it are
   * slowed down (login-throttle.service.ts). The answer never says why a key was refused. A right
   * key clears no count: it proves nothing about the wrong keys sent before it.
   */
  async login(apiKey: string, client: string, now = new Date()): Promise<LoginResult> {
    const outcome = await this.throttle.attempt({ keys: [client], clears: [], expensive: true }, now, async () => {
      const auth = await this.authenticate(apiKey);
      return auth ? { ok: true, value: auth } : { ok: false, refusal: null };
    });
    return this.opened(outcome, now);
  }

  /**
   * Logs a person in with an address and a password. Wrong tries are counted per client (the
   * same count as wrong keys) and per address (so spreading guesses over many clients does not
   * get more of them through), with the same slow-down; either count blocks. A right password
   * clears its address's count, not the client's. A wrong password and an unknown address get
   * the same answer after the same work.
   */
  async loginPerson(email: string, password: string, client: string, now = new Date()): Promise<LoginResult> {
    const address = addressKey(email);
    const outcome = await this.throttle.attempt({ keys: [client, address], clears: [address], expensive: true }, now, async () => {
      const auth = await this.people.verifyLogin(email, password);
      return auth ? { ok: true, value: auth } : { ok: false, refusal: null };
    });
    return this.opened(outcome, now);
  }

  /**
   * A person's new password, given the current one: wrong current passwords are counted per
   * client and per person like logins (a stolen session cannot try passwords at full speed).
   * Throws the people module's errors (the new password's problems), a 400 for a wrong current
   * password and a 429 while a count blocks. The person's other sessions end.
   */
  async changePassword(session: PageSession, current: string, next: string, client: string, now = new Date()): Promise<number> {
    const auth = session.auth;
    if (auth.principal.kind !== 'person') throw invalidInput('only a person has a password: this session was opened with an API key');
    const person = `person:${auth.principal.id}`;
    const outcome = await this.throttle.attempt({ keys: [client, person], clears: [person], expensive: true }, now, async () =>
      (await this.people.verifyOwnPassword(auth, current)) ? { ok: true, value: true } : { ok: false, refusal: null },
    );
    if (outcome.kind === 'throttled') {
      const seconds = Math.ceil(outcome.retryAfterMs / 1000);
      throw new DomainError(
        ErrorCode.TooManyRequests,
        `Too many wrong passwords were tried; wait ${seconds} second${seconds === 1 ? '' : 's'}, then try again.`,
      );
    }
    if (outcome.kind === 'refused') throw invalidInput('the current password is not right');
    await this.people.setOwnPassword(auth, next);
    return this.endOtherSessions(auth.principal.id, session.id);
  }

  private async opened(outcome: ThrottledOutcome<AuthContext>, now: Date): Promise<LoginResult> {
    if (outcome.kind === 'throttled') return { ok: false, reason: 'throttled', retryAfterMs: outcome.retryAfterMs };
    if (outcome.kind === 'refused') return { ok: false, reason: 'refused' };
    const result = await this.open(outcome.value, now);
    // Old rows go when someone logs in: no timer needed, and the table stays small.
    this.sessions.purgeEnded().catch((err: unknown) => this.logger.warn(`purging ended sessions failed: ${String(err)}`));
    return result;
  }

  /** A new session for `auth` (after a login, an accepted invitation or a password reset). */
  async open(auth: AuthContext, now = new Date()): Promise<{ ok: true; token: string; session: PageSession }> {
    const token = randomBytes(32).toString('base64url');
    const row = await this.sessions.insert({
      tokenHash: hashToken(token),
      workspaceId: auth.workspaceId,
      apiKeyId: auth.principal.kind === 'key' ? auth.principal.id : null,
      personId: auth.principal.kind === 'person' ? auth.principal.id : null,
      csrfToken: randomBytes(32).toString('base64url'),
      expiresAt: new Date(now.getTime() + IDLE_TIMEOUT_MS),
    });
    return { ok: true, token, session: this.toSession(row, auth) };
  }

  private async authenticate(apiKey: string): Promise<AuthContext | null> {
    const key = apiKey.trim();
    if (key === '' || key.length > 512 || /\s/.test(key)) return null;
    try {
      return await this.apiKeys.authenticate(`Bearer ${key}`);
    } catch (err) {
      if (err instanceof DomainError && err.code === ErrorCode.Unauthorized) return null;
      throw err;
    }
  }

  /** The live session of a cookie token, with its key's context; null when there is none. */
  async resolve(token: string | undefined, now = new Date()): Promise<PageSession | null> {
    if (!token || token.length > 200) return null;
    const row = await this.sessions.findLive(hashToken(token));
    if (!row) return null;
    return this.activate(row, now);
  }

  /** The live session with this id (the LinkedIn callback, which arrives without the cookie). */
  async resolveById(id: string, now = new Date()): Promise<PageSession | null> {
    const row = await this.sessions.findLiveById(id);
    return row ? this.activate(row, now) : null;
  }

  /**
   * A session lives while its key is not revoked, or its person not removed, checked on every
   * request: revoking the key or removing the person ends their open pages at once. The role is
   * read afresh too, so a changed role applies from the next request.
   */
  private async activate(row: SessionRow, now: Date): Promise<PageSession | null> {
    const auth = row.apiKeyId
      ? await this.apiKeys.activeKey(row.apiKeyId)
      : row.personId
        ? await this.people.activePerson(row.personId)
        : null;
    if (!auth || auth.workspaceId !== row.workspaceId) {
      await this.sessions.revoke(row.id);
      return null;
    }
    const wanted = Math.min(now.getTime() + IDLE_TIMEOUT_MS, row.createdAt.getTime() + ABSOLUTE_TIMEOUT_MS);
    if (wanted - row.expiresAt.getTime() >= EXTEND_EVERY_MS) await this.sessions.extend(row.id, new Date(wanted));
    return this.toSession(row, auth);
  }

  private toSession(row: SessionRow, auth: AuthContext): PageSession {
    return { id: row.id, csrfToken: row.csrfToken, flash: row.flash, auth };
  }

  logout(session: PageSession): Promise<void> {
    return this.sessions.revoke(session.id);
  }

  /** Ends every session of this session's API key or person, this one included. */
  logoutEverywhere(session: PageSession): Promise<number> {
    const p = session.auth.principal;
    return p.kind === 'key' ? this.sessions.revokeForKey(p.id) : this.sessions.revokeForPerson(p.id);
  }

  /** Ends a person's sessions but `keepId` (a new password: every other browser logs in again). */
  endOtherSessions(personId: string, keepId: string | null): Promise<number> {
    return this.sessions.revokeForPerson(personId, keepId);
  }

  flash(session: PageSession, flash: Flash): Promise<void> {
    return this.sessions.setFlash(session.id, flash);
  }

  /** The flash was shown: forget it. */
  async consumeFlash(session: PageSession): Promise<void> {
    if (session.flash) await this.sessions.clearFlash(session.id);
  }
}
