import { ConnectorInputError } from '../connector.interface';

/** Public settings of a LinkedIn account (returned by the API). */
export interface LinkedInConfig {
  authorUrn: string;
  /** When the access token given at save time expires (ISO 8601), if known. */
  tokenExpiresAt: string | null;
  /** Without one, a person has to reconnect before tokenExpiresAt (self-serve apps get none). */
  hasRefreshToken: boolean;
}

/** Encrypted at rest; never returned. */
export interface LinkedInCredentials {
  accessToken: string;
  refreshToken: string | null;
  /** ISO 8601; null when unknown. */
  expiresAt: string | null;
}

const AUTHOR_URN = /^urn:li:(person|organization):[A-Za-z0-9_-]{1,100}$/;
const FIELDS = new Set(['accessToken', 'refreshToken', 'expiresAt', 'authorUrn']);

/**
 * Endpoint overrides an account could once carry. They are refused now: the token refresh sends
 * the operator's LINKEDIN_CLIENT_SECRET to the OAuth endpoint, and an account's own base URL let
 * any workspace receive it on a server of its choosing. The endpoints are the operator's
 * LINKEDIN_API_BASE_URL and LINKEDIN_OAUTH_BASE_URL, for every account.
 */
const OPERATOR_ONLY: Readonly<Record<string, string>> = {
  apiBaseUrl: 'LINKEDIN_API_BASE_URL',
  oauthBaseUrl: 'LINKEDIN_OAUTH_BASE_URL',
};

/** Validates POST/PATCH /v1/accounts `config` for LinkedIn; errors name the field, never echo a token. */
export function parseLinkedInInput(input: unknown): { config: LinkedInConfig; credentials: LinkedInCredentials } {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new ConnectorInputError('config must be an object: { accessToken, refreshToken?, expiresAt?, authorUrn }');
  }
  const o = input as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    const variable = OPERATOR_ONLY[key];
    if (variable !== undefined) {
      throw new ConnectorInputError(
        `config.${key} is not accepted: LinkedIn endpoints are set by the operator (${variable}) for every account, so that tokens and the app's client secret only go to them`,
      );
    }
    if (!FIELDS.has(key)) throw new ConnectorInputError(`config.${key} is not allowed (unknown field)`);
  }
  const token = (field: 'accessToken' | 'refreshToken', required: boolean): string | null => {
    const v = o[field];
    if (v === undefined || v === null) {
      if (required) throw new ConnectorInputError(`config.${field} is required`);
      return null;
    }
    if (typeof v !== 'string' || v.trim() === '' || v.length > 4096 || /\s/.test(v)) {
      throw new ConnectorInputError(`config.${field} must be a non-empty token without spaces (at most 4096 characters)`);
    }
    return v;
  };
  const accessToken = token('accessToken', true)!;
  const refreshToken = token('refreshToken', false);
  let expiresAt: string | null = null;
  if (o.expiresAt !== undefined && o.expiresAt !== null) {
    const d = typeof o.expiresAt === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(o.expiresAt) ? new Date(o.expiresAt) : new Date(NaN);
    if (Number.isNaN(d.getTime()))
      throw new ConnectorInputError('config.expiresAt must be an ISO 8601 date-time, e.g. 2026-12-01T09:00:00Z');
    expiresAt = d.toISOString();
  }
  if (typeof o.authorUrn !== 'string' || !AUTHOR_URN.test(o.authorUrn)) {
    throw new ConnectorInputError('config.authorUrn must be urn:li:person:{id} (the `sub` of /v2/userinfo) or urn:li:organization:{id}');
  }
  const config: LinkedInConfig = { authorUrn: o.authorUrn, tokenExpiresAt: expiresAt, hasRefreshToken: refreshToken !== null };
  return { config, credentials: { accessToken, refreshToken, expiresAt } };
}

/** The stored credentials, or null when they are not usable (then the account needs new ones). */
export function storedCredentials(raw: Record<string, unknown>): LinkedInCredentials | null {
  if (typeof raw.accessToken !== 'string' || raw.accessToken === '') return null;
  return {
    accessToken: raw.accessToken,
    refreshToken: typeof raw.refreshToken === 'string' && raw.refreshToken !== '' ? raw.refreshToken : null,
    expiresAt: typeof raw.expiresAt === 'string' ? raw.expiresAt : null,
  };
}

/** The stored config; endpoint overrides an older account may carry are not read (see OPERATOR_ONLY). */
export function storedConfig(raw: Record<string, unknown>): LinkedInConfig | null {
  if (typeof raw.authorUrn !== 'string' || !AUTHOR_URN.test(raw.authorUrn)) return null;
  return {
    authorUrn: raw.authorUrn,
    tokenExpiresAt: typeof raw.tokenExpiresAt === 'string' ? raw.tokenExpiresAt : null,
    hasRefreshToken: raw.hasRefreshToken === true,
  };
}

/** Refresh ahead of expiry by this much, so a token does not run out between refresh and use. */
export const REFRESH_AHEAD_MS = 5 * 60_000;

/** True when the token should be refreshed before use (it has a known expiry within the margin). */
export function needsRefresh(credentials: LinkedInCredentials, now: Date): boolean {
  if (credentials.refreshToken === null || credentials.expiresAt === null) return false;
  return new Date(credentials.expiresAt).getTime() - now.getTime() <= REFRESH_AHEAD_MS;
}
