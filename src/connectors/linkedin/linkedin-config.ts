import { ConnectorInputError } from '../connector.interface';

/** Public settings of a LinkedIn account (returned by the API). */
export interface LinkedInConfig {
  authorUrn: string;
  /** Overrides LINKEDIN_API_BASE_URL (tests point it at a fake). */
  apiBaseUrl?: string;
  /** Where tokens are refreshed; overrides LINKEDIN_OAUTH_BASE_URL. */
  oauthBaseUrl?: string;
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
const FIELDS = new Set(['accessToken', 'refreshToken', 'expiresAt', 'authorUrn', 'apiBaseUrl', 'oauthBaseUrl']);

function baseUrl(value: unknown, field: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new ConnectorInputError(`config.${field} must be a string`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConnectorInputError(`config.${field} must be an absolute http(s) URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ConnectorInputError(`config.${field} must use https (or http)`);
  if (url.username || url.password || url.search || url.hash) {
    throw new ConnectorInputError(`config.${field} must be a plain base URL (no credentials, query or fragment)`);
  }
  return url.href.replace(/\/+$/, '');
}

/** Validates POST/PATCH /v1/accounts `config` for LinkedIn; errors name the field, never echo a token. */
export function parseLinkedInInput(input: unknown): { config: LinkedInConfig; credentials: LinkedInCredentials } {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new ConnectorInputError('config must be an object: { accessToken, refreshToken?, expiresAt?, authorUrn, apiBaseUrl? }');
  }
  const o = input as Record<string, unknown>;
  for (const key of Object.keys(o)) if (!FIELDS.has(key)) throw new ConnectorInputError(`config.${key} is not allowed (unknown field)`);
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
    if (Number.isNaN(d.getTime())) throw new ConnectorInputError('config.expiresAt must be an ISO 8601 date-time, e.g. 2026-12-01T09:00:00Z');
    expiresAt = d.toISOString();
  }
  if (typeof o.authorUrn !== 'string' || !AUTHOR_URN.test(o.authorUrn)) {
    throw new ConnectorInputError('config.authorUrn must be urn:li:person:{id} (the `sub` of /v2/userinfo) or urn:li:organization:{id}');
  }
  const config: LinkedInConfig = { authorUrn: o.authorUrn, tokenExpiresAt: expiresAt, hasRefreshToken: refreshToken !== null };
  const api = baseUrl(o.apiBaseUrl, 'apiBaseUrl');
  const oauth = baseUrl(o.oauthBaseUrl, 'oauthBaseUrl');
  if (api !== undefined) config.apiBaseUrl = api;
  if (oauth !== undefined) config.oauthBaseUrl = oauth;
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

export function storedConfig(raw: Record<string, unknown>): LinkedInConfig | null {
  if (typeof raw.authorUrn !== 'string' || !AUTHOR_URN.test(raw.authorUrn)) return null;
  return {
    authorUrn: raw.authorUrn,
    ...(typeof raw.apiBaseUrl === 'string' ? { apiBaseUrl: raw.apiBaseUrl } : {}),
    ...(typeof raw.oauthBaseUrl === 'string' ? { oauthBaseUrl: raw.oauthBaseUrl } : {}),
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
