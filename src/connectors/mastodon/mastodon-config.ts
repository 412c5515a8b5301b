import { ConnectorInputError } from '../connector.interface';
import { DEFAULT_CHARACTERS_PER_URL } from './mastodon-text';

/**
 * The shapes a Mastodon account is stored in, and the validation of the API's `config` input
 * (`{ instanceUrl, accessToken }`). The access token is a credential: encrypted at rest, never
 * returned. Everything else is public config: the instance, who the token posts as (from
 * `verify_credentials`), and the instance's own limits (from `/api/v2/instance`), read when the
 * account is connected or checked.
 */

/** What an instance allows, as `/api/v2/instance` says (`configuration.statuses`, `configuration.media_attachments`). */
export interface MastodonLimits {
  /** `statuses.max_characters`: 500 on most instances. */
  maxCharacters: number;
  /** `statuses.characters_reserved_per_url`: what every link counts as (23). */
  charactersReservedPerUrl: number;
  /** `statuses.max_media_attachments` (4 on most). */
  maxMediaAttachments: number;
  /** `media_attachments.image_matrix_limit`: the most pixels an image may have, when said. */
  imageMatrixLimit: number | null;
}

/** The limits Herald counts with when the instance's are not known (Mastodon's defaults). */
export const DEFAULT_MASTODON_LIMITS: MastodonLimits = {
  maxCharacters: 500,
  charactersReservedPerUrl: DEFAULT_CHARACTERS_PER_URL,
  maxMediaAttachments: 4,
  imageMatrixLimit: null,
};

/** Public settings of a Mastodon account (returned by the API). */
export interface MastodonConfig {
  /** The instance's origin, e.g. `https://mastodon.example`. */
  instanceUrl: string;
  /** Who the token posts as (`verify_credentials`): the instance's account id, `@name`, display name, profile. */
  accountId: string | null;
  username: string | null;
  displayName: string | null;
  profileUrl: string | null;
  /** The instance's limits when they were last read; null: not known (500 characters assumed). */
  limits: MastodonLimits | null;
  limitsReadAt: string | null;
}

/** Encrypted at rest; never returned. */
export interface MastodonCredentials {
  accessToken: string;
}

const FIELDS = new Set(['instanceUrl', 'accessToken']);
const MAX_URL_LENGTH = 2048;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `config.instanceUrl` as an origin: an absolute http(s) URL of the instance itself (a path
 * other than `/`, a query, a fragment or a user name are refused: the API lives at the root).
 */
export function parseInstanceUrl(value: unknown): string {
  const problem = 'config.instanceUrl must be the address of a Mastodon instance, e.g. https://mastodon.social';
  if (typeof value !== 'string' || value.trim() === '') throw new ConnectorInputError(`${problem} (it is required)`);
  if (value.length > MAX_URL_LENGTH) throw new ConnectorInputError(`config.instanceUrl must be at most ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new ConnectorInputError(problem);
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.hostname === '') throw new ConnectorInputError(problem);
  if (url.username !== '' || url.password !== '') {
    throw new ConnectorInputError('config.instanceUrl must not contain a user name or password; give the token in config.accessToken');
  }
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '') {
    throw new ConnectorInputError(`${problem}: the instance's address alone, without a path or query (${url.origin})`);
  }
  return url.origin;
}

/**
 * An account's token goes to its instance on every call, so the instance must be reached over
 * https. Plain http only where private addresses are allowed (HERALD_ALLOW_PRIVATE_URLS: a test
 * instance on loopback or a private network), as "Connect with Mastodon" does.
 */
export function requireHttps(instanceUrl: string, allowPlainHttp: boolean): void {
  if (new URL(instanceUrl).protocol === 'https:' || allowPlainHttp) return;
  throw new ConnectorInputError(
    'config.instanceUrl must start with https://: the access token would cross the network unencrypted over plain http',
  );
}

/**
 * Validates POST/PATCH /v1/accounts `config` for Mastodon: `{ instanceUrl, accessToken }`. On a
 * PATCH, `instanceUrl` may be left out to keep the stored one (`previousInstanceUrl`). Errors
 * name the field, never echo the token.
 */
export function parseMastodonInput(
  input: unknown,
  previousInstanceUrl: string | null = null,
): { instanceUrl: string; accessToken: string } {
  if (!isPlainObject(input)) throw new ConnectorInputError('config must be an object: { instanceUrl, accessToken }');
  for (const key of Object.keys(input)) {
    if (!FIELDS.has(key)) {
      const shown = JSON.stringify(key.length > 64 ? `${key.slice(0, 64)}…` : key);
      throw new ConnectorInputError(`config.${shown} is not allowed (a Mastodon account takes instanceUrl and accessToken)`);
    }
  }
  const instanceUrl =
    input.instanceUrl === undefined && previousInstanceUrl !== null ? previousInstanceUrl : parseInstanceUrl(input.instanceUrl);
  const token = input.accessToken;
  if (token === undefined || token === null) throw new ConnectorInputError('config.accessToken is required');
  if (typeof token !== 'string' || token.trim() === '' || token.length > 4096 || /\s/.test(token)) {
    throw new ConnectorInputError('config.accessToken must be a non-empty token without spaces (at most 4096 characters)');
  }
  return { instanceUrl, accessToken: token };
}

function positiveInt(value: unknown, max: number): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 && value <= max ? value : null;
}

/** Limits as stored (or as an instance sent them), each field checked; null when there are none usable. */
export function readLimits(raw: unknown): MastodonLimits | null {
  if (!isPlainObject(raw)) return null;
  const maxCharacters = positiveInt(raw.maxCharacters, 1_000_000);
  if (maxCharacters === null) return null;
  const perUrl = raw.charactersReservedPerUrl;
  return {
    maxCharacters,
    charactersReservedPerUrl:
      typeof perUrl === 'number' && Number.isInteger(perUrl) && perUrl >= 0 && perUrl <= 10_000 ? perUrl : DEFAULT_CHARACTERS_PER_URL,
    maxMediaAttachments: positiveInt(raw.maxMediaAttachments, 1_000) ?? DEFAULT_MASTODON_LIMITS.maxMediaAttachments,
    imageMatrixLimit: positiveInt(raw.imageMatrixLimit, Number.MAX_SAFE_INTEGER),
  };
}

/** The limits to count a Mastodon account's text with: its instance's, or the defaults when not known. Pure. */
export function limitsOf(config: Record<string, unknown> | null | undefined): MastodonLimits {
  return readLimits(config?.limits) ?? DEFAULT_MASTODON_LIMITS;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** The stored config, or null when it has no usable instance URL (then the account needs new settings). */
export function storedConfig(raw: Record<string, unknown>): MastodonConfig | null {
  let instanceUrl: string;
  try {
    instanceUrl = parseInstanceUrl(raw.instanceUrl);
  } catch {
    return null;
  }
  return {
    instanceUrl,
    accountId: str(raw.accountId),
    username: str(raw.username),
    displayName: typeof raw.displayName === 'string' ? raw.displayName : null,
    profileUrl: str(raw.profileUrl),
    limits: readLimits(raw.limits),
    limitsReadAt: str(raw.limitsReadAt),
  };
}

/** The stored token, or null when there is none usable. */
export function storedCredentials(raw: Record<string, unknown>): MastodonCredentials | null {
  return typeof raw.accessToken === 'string' && raw.accessToken !== '' ? { accessToken: raw.accessToken } : null;
}

/** `@name@host`: how a person names the account across instances. */
export function handleOf(config: Pick<MastodonConfig, 'instanceUrl' | 'username'>): string | null {
  if (config.username === null) return null;
  return `@${config.username}@${new URL(config.instanceUrl).host}`;
}
