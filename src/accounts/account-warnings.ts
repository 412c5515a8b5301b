/** Warn this long before a token that cannot be refreshed expires (docs/delivery.md: 7 days before the 60-day LinkedIn token). */
export const TOKEN_EXPIRY_WARNING_MS = 7 * 86_400_000;

/**
 * Things a person should act on, shown with the account (API and page). Pure: computed from the
 * public config when the account is read. Today: an access token that will expire and cannot be
 * refreshed (a LinkedIn self-serve app gets no refresh token), from 7 days before.
 */
export function accountWarnings(config: Record<string, unknown>, now: Date): string[] {
  const expires = typeof config.tokenExpiresAt === 'string' ? new Date(config.tokenExpiresAt) : null;
  if (!expires || Number.isNaN(expires.getTime()) || config.hasRefreshToken === true) return [];
  const left = expires.getTime() - now.getTime();
  if (left <= 0) return [`the access token expired on ${expires.toISOString()}; reconnect the account`];
  if (left <= TOKEN_EXPIRY_WARNING_MS) {
    return [
      `the access token expires on ${expires.toISOString()} (in ${Math.ceil(left / 86_400_000)} days) and cannot be refreshed; reconnect the account before then`,
    ];
  }
  return [];
}
