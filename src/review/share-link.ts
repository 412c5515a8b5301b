import { createHash, randomBytes } from 'node:crypto';

/**
 * Client review links (pure parts). A link's token is 256 random bits (32 bytes from the
 * operating system's generator, base64url: 43 characters), shown once in the answer that made
 * it; only its SHA-256 is stored. A fast hash is right here: the token is random, there is no
 * dictionary to try, and the page looks a token up by its hash in one indexed read.
 */

export const DEFAULT_EXPIRY_DAYS = 7;
export const MIN_EXPIRY_DAYS = 1;
export const MAX_EXPIRY_DAYS = 30;
/** The most posts one link shows (the post of the path included). */
export const MAX_POSTS_PER_LINK = 20;

const DAY_MS = 86_400_000;

/** `random(32)`: the operating system's generator in the service, a seeded one in tests. */
export function newShareToken(random: (bytes: number) => Buffer = randomBytes): string {
  return random(32).toString('base64url');
}

export function hashShareToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** A token as a link carries it: 43 base64url characters. Anything else is not one of ours (and is not looked up). */
export function looksLikeShareToken(value: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(value);
}

export function shareLinkExpiry(now: Date, days: number = DEFAULT_EXPIRY_DAYS): Date {
  return new Date(now.getTime() + days * DAY_MS);
}

export type ShareLinkStatus = 'active' | 'expired' | 'revoked';

/** Where a link stands at `now`: revoked wins over expired; the expiry instant itself is expired. */
export function shareLinkStatus(link: { expiresAt: Date; revokedAt: Date | null }, now: Date): ShareLinkStatus {
  if (link.revokedAt) return 'revoked';
  return now.getTime() >= link.expiresAt.getTime() ? 'expired' : 'active';
}

/**
 * The posts a new link shows: the post of the path first, then `postIds` in their order, each
 * once (ids compared in lower case). Refused (a sentence naming the field) beyond
 * MAX_POSTS_PER_LINK.
 */
export function linkPostIds(
  pathPostId: string,
  postIds: readonly string[] | undefined,
): { ok: true; ids: string[] } | { ok: false; message: string } {
  const ids: string[] = [];
  for (const id of [pathPostId, ...(postIds ?? [])].map((i) => i.toLowerCase())) if (!ids.includes(id)) ids.push(id);
  if (ids.length > MAX_POSTS_PER_LINK) {
    return {
      ok: false,
      message: `postIds: a review link shows at most ${MAX_POSTS_PER_LINK} posts (the post of the path included); this one would show ${ids.length}`,
    };
  }
  return { ok: true, ids };
}

/** The public address of a link: PUBLIC_URL + /review/ + the token. */
export function reviewUrl(publicUrl: string, token: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/review/${token}`;
}
