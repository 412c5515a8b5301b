import { ConnectorInputError } from '../connector.interface';

/**
 * The shapes a Bluesky account is stored in, and the validation of the API's `config` input
 * (`{ identifier, appPassword, service? }`). The app password and the session tokens
 * are secrets and live only in the encrypted credentials.
 */

export const DEFAULT_SERVICE = 'https://bsky.social';
const MAX_IDENTIFIER_LENGTH = 253;
const MAX_PASSWORD_LENGTH = 256;
const MAX_URL_LENGTH = 2048;

/** Public config, shown by the API and the page. `did`/`handle` come from the last login. */
export interface BlueskyConfig {
  identifier: string;
  service: string;
  did?: string;
  handle?: string;
  /** `oauth` for an account connected with "Connect with Bluesky"; absent: an app password. */
  auth?: 'oauth';
}

/** A session as `com.atproto.server.createSession` / `refreshSession` return it. */
export interface StoredSession {
  accessJwt: string;
  refreshJwt: string;
  did: string;
  handle: string;
}

/** Encrypted credentials. */
export interface BlueskyCredentials {
  appPassword: string;
  session: StoredSession | null;
}

export interface BlueskyInput {
  identifier: string;
  appPassword: string;
  service: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nonEmptyString(value: unknown, field: string, max: number): string {
  if (typeof value !== 'string' || value.trim() === '') throw new ConnectorInputError(`config.${field} is required (a non-empty string)`);
  if (value.length > max) throw new ConnectorInputError(`config.${field} is longer than ${max} characters`);
  return value.trim();
}

/** The service URL without a trailing slash, so `https://bsky.social/` and `https://bsky.social` are one. */
export function normaliseService(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConnectorInputError('config.service must be an absolute http(s) URL, e.g. https://bsky.social');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConnectorInputError('config.service must be an absolute http(s) URL, e.g. https://bsky.social');
  }
  if (url.username !== '' || url.password !== '') throw new ConnectorInputError('config.service must not contain credentials');
  if (url.search !== '' || url.hash !== '') throw new ConnectorInputError('config.service must not have a query string or fragment');
  return url.href.replace(/\/+$/, '');
}

export function parseBlueskyInput(input: unknown): BlueskyInput {
  if (!isRecord(input)) throw new ConnectorInputError('config must be an object: { identifier, appPassword, service? }');
  const allowed = new Set(['identifier', 'appPassword', 'service']);
  for (const key of Object.keys(input)) {
    if (!allowed.has(key))
      throw new ConnectorInputError(`config.${key} is not a Bluesky setting (expected identifier, appPassword, service)`);
  }
  // "@alice.bsky.social" as people write it is the handle "alice.bsky.social".
  const identifier = nonEmptyString(input.identifier, 'identifier', MAX_IDENTIFIER_LENGTH).replace(/^@/, '');
  const appPassword = nonEmptyString(input.appPassword, 'appPassword', MAX_PASSWORD_LENGTH);
  let service = DEFAULT_SERVICE;
  if (input.service !== undefined && input.service !== null) {
    service = normaliseService(nonEmptyString(input.service, 'service', MAX_URL_LENGTH));
  }
  return { identifier, appPassword, service };
}

function isSession(value: unknown): value is StoredSession {
  return (
    isRecord(value) &&
    typeof value.accessJwt === 'string' &&
    typeof value.refreshJwt === 'string' &&
    typeof value.did === 'string' &&
    typeof value.handle === 'string'
  );
}

/** The stored account in a usable shape, or the reason it cannot be used. */
export function readStoredAccount(
  config: Record<string, unknown>,
  credentials: Record<string, unknown>,
): { config: BlueskyConfig; credentials: BlueskyCredentials } | { problem: string } {
  if (typeof config.identifier !== 'string' || config.identifier === '')
    return { problem: 'the account has no Bluesky identifier; edit the account' };
  if (typeof credentials.appPassword !== 'string' || credentials.appPassword === '') {
    return { problem: 'the account has no app password; edit the account' };
  }
  const service = typeof config.service === 'string' && config.service !== '' ? config.service : DEFAULT_SERVICE;
  return {
    config: {
      identifier: config.identifier,
      service,
      ...(typeof config.did === 'string' ? { did: config.did } : {}),
      ...(typeof config.handle === 'string' ? { handle: config.handle } : {}),
    },
    credentials: { appPassword: credentials.appPassword, session: isSession(credentials.session) ? credentials.session : null },
  };
}

/** An account connected with OAuth: its session lives in bluesky_oauth_sessions (oauth/). */
export interface StoredOAuthAccount {
  config: BlueskyConfig & { did: string; handle: string };
  oauth: { sessionId: string; did: string };
}

/** The OAuth session an account's credentials name, or null for an app-password account. */
export function readOAuthAccount(config: Record<string, unknown>, credentials: Record<string, unknown>): StoredOAuthAccount | null {
  const oauth = credentials.oauth;
  if (!isRecord(oauth) || typeof oauth.sessionId !== 'string' || typeof oauth.did !== 'string') return null;
  const handle = typeof config.handle === 'string' ? config.handle : oauth.did;
  return {
    config: {
      identifier: typeof config.identifier === 'string' ? config.identifier : handle,
      service: typeof config.service === 'string' && config.service !== '' ? config.service : DEFAULT_SERVICE,
      did: oauth.did,
      handle,
      auth: 'oauth',
    },
    oauth: { sessionId: oauth.sessionId, did: oauth.did },
  };
}
