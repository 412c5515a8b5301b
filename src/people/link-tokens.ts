import { createHash, randomBytes } from 'node:crypto';

/**
 * One-use links sent to people (pure parts, and the token helpers). A token is 256 random bits
 * in the link; only its SHA-256 is stored, and the mail that carries the link waits in
 * mail_outbox sealed and loses its body once sent (src/mail/mail-seal.ts), so a copy of the
 * database opens nothing. Without SMTP_URL the mail is an .eml file under HERALD_DATA_DIR/outbox,
 * the mailbox stand-in (not the database), where the link works until used or expired.
 */

/** An invitation link works for 7 days. */
export const INVITATION_TTL_MS = 7 * 86_400_000;
/** A password-reset link works for 1 hour. */
export const RESET_TTL_MS = 3_600_000;
/** A person gets at most one reset mail per this long, however often the form is sent. */
export const RESET_MAIL_EVERY_MS = 5 * 60_000;

export interface LinkState {
  expiresAt: Date;
  usedAt: Date | null;
  revokedAt: Date | null;
}

export type LinkStatus = 'usable' | 'used' | 'revoked' | 'expired';

/** Where a one-use link stands at `now`. The expiry instant itself is already expired. */
export function linkStatus(link: LinkState, now: Date): LinkStatus {
  if (link.usedAt) return 'used';
  if (link.revokedAt) return 'revoked';
  if (now.getTime() >= link.expiresAt.getTime()) return 'expired';
  return 'usable';
}

export function expiryFrom(now: Date, ttlMs: number): Date {
  return new Date(now.getTime() + ttlMs);
}

/** May another reset mail go out, given when the last one was asked for? */
export function resetMailAllowed(lastRequestedAt: Date | null, now: Date): boolean {
  return lastRequestedAt === null || now.getTime() - lastRequestedAt.getTime() >= RESET_MAIL_EVERY_MS;
}

export function newLinkToken(): string {
  return randomBytes(32).toString('base64url');
}

export function hashLinkToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** A token as links carry it: 43 base64url characters (anything else is not ours). */
export function looksLikeLinkToken(value: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(value);
}
