import type { AccountView } from '../accounts/account.types';
import { TOKEN_EXPIRY_WARNING_MS } from '../accounts/account-warnings';

/** The latest failed attempts of an account, as the jobs module reads them. */
export interface AccountFailures {
  /** The most recent failed attempt (any class but success). */
  last: { at: string; errorClass: string; message: string | null } | null;
  /** The most recent attempt the platform refused the credentials on. */
  lastAuthAt: string | null;
}

export type Tone = 'ok' | 'warn' | 'bad';

/**
 * The health badge of an account card: a tone, a short label, and the sentence that says what
 * is wrong and what to do. Times are ISO strings for the template to show in the person's zone.
 */
export interface Health {
  tone: Tone;
  label: string;
  /** "since" (needs re-authentication) or "until" (circuit open), when known. */
  since: string | null;
  until: string | null;
  detail: string | null;
}

export interface TokenExpiry {
  tone: Tone;
  at: string;
  text: string;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Pure: what the badge says, from the account as the API shows it and its latest failures. */
export function accountHealth(account: AccountView, failures: AccountFailures, now: Date): Health {
  const none = { since: null, until: null };
  if (account.status === 'disabled') {
    return { ...none, tone: 'bad', label: 'Disabled', detail: account.statusReason ?? 'disabled; its posts wait until it is enabled' };
  }
  if (account.status === 'needs_reauth') {
    return {
      ...none,
      tone: 'bad',
      label: 'Needs re-authentication',
      since: failures.lastAuthAt,
      detail: `${account.statusReason ?? 'the platform refused the credentials'}. Its posts wait until it is reconnected.`,
    };
  }
  const { state, openUntil, consecutiveFailures } = account.circuit;
  if (state === 'open' && openUntil !== null && Date.parse(openUntil) > now.getTime()) {
    return {
      ...none,
      tone: 'warn',
      label: 'Circuit open',
      until: openUntil,
      detail: `${plural(consecutiveFailures, 'failed attempt')} in a row: Herald leaves the receiver alone until then, then tries one post.`,
    };
  }
  if (state !== 'closed') {
    return {
      ...none,
      tone: 'warn',
      label: 'Recovering',
      detail: 'the next post is a test of the receiver; the others follow when it succeeds.',
    };
  }
  if (consecutiveFailures > 0) {
    return {
      ...none,
      tone: 'warn',
      label: 'Active',
      detail: `${plural(consecutiveFailures, 'failed attempt')} in a row; Herald keeps retrying.`,
    };
  }
  return { ...none, tone: 'ok', label: 'Active', detail: null };
}

/** LinkedIn's access token expiry, with a warning from 7 days before when it cannot be refreshed. */
export function tokenExpiry(account: AccountView, now: Date): TokenExpiry | null {
  const raw = account.config.tokenExpiresAt;
  if (account.provider !== 'linkedin' || typeof raw !== 'string' || Number.isNaN(Date.parse(raw))) return null;
  const left = Date.parse(raw) - now.getTime();
  if (account.config.hasRefreshToken === true) {
    return { tone: 'ok', at: raw, text: 'Access token expires on' };
  }
  if (left <= 0) return { tone: 'bad', at: raw, text: 'Access token expired on' };
  if (left <= TOKEN_EXPIRY_WARNING_MS) return { tone: 'warn', at: raw, text: 'Reconnect before the access token expires on' };
  return { tone: 'ok', at: raw, text: 'Access token expires on' };
}
