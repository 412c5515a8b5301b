/**
 * How many link cards one person may fetch (pure: the caller passes `now`).
 *
 * "Fetch the link card" makes Herald read a page and its image from the internet on a person's
 * click: without a bound, one session could use Herald to send thousands of requests a minute
 * to a site of its choosing. A person composing presses it a few times per post; 20 a minute
 * is far above that and far below a flood.
 *
 * A fixed window per person (the session's person, or its API key): the first fetch opens a
 * window of WINDOW_MS, the fetches in it are counted, and the next fetch after it opens a new
 * one. The count lives in PostgreSQL (link-card-quota.repository.ts), so every Herald process
 * applies the same one.
 */

export const LINK_CARDS_PER_WINDOW = 20;
export const LINK_CARD_WINDOW_MS = 60_000;

/** One person's window: when it opened and the fetches asked for in it (the refused ones too). */
export interface LinkCardWindow {
  openedAt: Date;
  fetches: number;
}

export type LinkCardDecision = { allowed: true } | { allowed: false; retryAfterS: number };

/** The key of a person's count: who acts on the page (a person, or the API key they logged in with). */
export function quotaKey(principal: { kind: 'key' | 'person'; id: string }): string {
  return `${principal.kind}:${principal.id}`;
}

/** Whether `window` (already counting this fetch) allows it; else how many whole seconds until the window ends. */
export function decideLinkCard(window: LinkCardWindow, now: Date): LinkCardDecision {
  if (window.fetches <= LINK_CARDS_PER_WINDOW) return { allowed: true };
  const left = window.openedAt.getTime() + LINK_CARD_WINDOW_MS - now.getTime();
  return { allowed: false, retryAfterS: Math.min(LINK_CARD_WINDOW_MS / 1000, Math.max(1, Math.ceil(left / 1000))) };
}

/** What the person reads when the count is full. */
export function tooManyLinkCards(retryAfterS: number): string {
  return `too many link cards: at most ${LINK_CARDS_PER_WINDOW} a minute per person; wait ${retryAfterS} s and fetch it again`;
}
