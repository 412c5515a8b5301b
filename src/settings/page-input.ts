/**
 * Small pure rules of the page's own input (not the API's: those run in the services).
 */

/**
 * Where to go after logging in. Only a path of this page is accepted (an open redirect would
 * let a link to Herald's login send a person on to a look-alike site): `/settings/…`, no
 * scheme, no host, no `//`, no backslash, no control characters. Anything else: the accounts page.
 */
export function safeNextPath(value: unknown): string {
  const fallback = '/settings/accounts';
  if (typeof value !== 'string' || value.length > 500) return fallback;
  if (!/^\/settings(\/[A-Za-z0-9._~\-/]*)?(\?[A-Za-z0-9._~\-=&%+]*)?$/.test(value)) return fallback;
  if (value.includes('//') || value.includes('/..') || value.startsWith('/settings/login') || value.startsWith('/settings/logout'))
    return fallback;
  return value;
}

/**
 * Bluesky app passwords are four groups of four letters or digits (Settings → Privacy and
 * security → App passwords). A main password does not have that shape; catching it here
 * saves a person from a login that cannot work (and from storing their main password).
 */
export const APP_PASSWORD_PATTERN = '[A-Za-z0-9]{4}-[A-Za-z0-9]{4}-[A-Za-z0-9]{4}-[A-Za-z0-9]{4}';
const APP_PASSWORD = new RegExp(`^${APP_PASSWORD_PATTERN}$`);

export function looksLikeAppPassword(value: string): boolean {
  return APP_PASSWORD.test(value.trim());
}

/** A form field as one trimmed string ('' when absent or repeated). */
export function field(body: unknown, name: string): string {
  const v = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
  return typeof v === 'string' ? v.trim() : '';
}

/** A form field as it was typed (post text keeps its spaces and line breaks). */
export function rawField(body: unknown, name: string): string {
  const v = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
  return typeof v === 'string' ? v.replace(/\r\n/g, '\n') : '';
}

/** A repeated form field (checkboxes) as a list of strings. */
export function fields(body: unknown, name: string): string[] {
  const v = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  return [];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => UUID.test(value);

/** "2026-12-01 14:32 UTC": what the page prints before its script shows the person's own time. */
export function formatUtc(iso: string | Date | null | undefined): string {
  if (iso === null || iso === undefined) return '';
  const d = typeof iso === 'string' ? new Date(iso) : iso;
  if (Number.isNaN(d.getTime())) return '';
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** The "dead within" filter of the failed-posts list: a lower bound, from a fixed set of choices. */
export const DEAD_WITHIN: Record<string, number> = { '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 };

export function deadSince(choice: string, now: Date): string | undefined {
  const ms = DEAD_WITHIN[choice];
  return ms === undefined ? undefined : new Date(now.getTime() - ms).toISOString();
}
