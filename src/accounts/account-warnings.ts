import { linkedInVersionNotice } from '../config/linkedin-versions';
import type { Provider } from '../connectors/connector.interface';
/** Warn this long before a token that cannot be refreshed expires (docs/delivery.md: 7 days before the 60-day LinkedIn token). */
export const TOKEN_EXPIRY_WARNING_MS = 7 * 86_400_000;

/** What the warnings depend on besides the account: the instance's LinkedIn API version. */
export interface WarningContext {
  now: Date;
  linkedInVersion: string;
}

/**
 * Things a person should act on, shown with the account (API, page, digest). Pure: computed
 * from the public config when the account is read. Today: an access token that will expire and
 * cannot be refreshed (a LinkedIn self-serve app gets no refresh token), from 7 days before; and
 * on every LinkedIn account, the configured API version when its sunset is 60 days away or past
 * (src/config/linkedin-versions.ts).
 */
export function accountWarnings(provider: Provider, config: Record<string, unknown>, ctx: WarningContext): string[] {
  const version = provider === 'linkedin' ? linkedInVersionNotice(ctx.linkedInVersion, ctx.now) : null;
  return [...tokenWarnings(config, ctx.now), ...(version ? [version.message] : [])];
}

/** True for the token-expiry warning (the page shows it on its own line). */
export function isTokenWarning(warning: string): boolean {
  return warning.startsWith('the access token ');
}

function tokenWarnings(config: Record<string, unknown>, now: Date): string[] {
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
