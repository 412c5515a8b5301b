import type { Key, OAuthClientMetadataInput } from '@atproto/oauth-client-node';
import { createHash } from 'node:crypto';
import { atprotoOAuth } from '../atproto';

/**
 * The pure parts of Herald's Bluesky OAuth client (AT Protocol OAuth, "Client Types" and
 * "Client ID Metadata Document"): a confidential web client whose `client_id` is the https URL
 * of its metadata, served by Herald under PUBLIC_URL, authenticating at the token endpoint with
 * `private_key_jwt` (ES256) against the public key it serves at `jwks_uri`. PAR, PKCE and DPoP
 * are the library's (`@atproto/oauth-client-node`); nothing here signs or speaks HTTP.
 */

export const CLIENT_METADATA_PATH = '/oauth/bluesky/client-metadata.json';
export const JWKS_PATH = '/oauth/bluesky/jwks.json';
export const CALLBACK_PATH = '/settings/bluesky/callback';

/** The algorithm of Herald's client key: ES256 is the one every atproto authorization server must accept. */
export const CLIENT_KEY_ALG = 'ES256';

export function clientMetadata(publicUrl: string, scope: string): OAuthClientMetadataInput {
  return {
    client_id: `${publicUrl}${CLIENT_METADATA_PATH}`,
    client_name: 'Herald',
    client_uri: publicUrl,
    redirect_uris: [`${publicUrl}${CALLBACK_PATH}`],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    scope,
    application_type: 'web',
    token_endpoint_auth_method: 'private_key_jwt',
    token_endpoint_auth_signing_alg: CLIENT_KEY_ALG,
    dpop_bound_access_tokens: true,
    jwks_uri: `${publicUrl}${JWKS_PATH}`,
  };
}

export type Availability = { ok: true } | { ok: false; reason: string };

/**
 * Whether "Connect with Bluesky" can work from this PUBLIC_URL. Authorization servers fetch the
 * client metadata from the `client_id` URL, and the reference one (@atproto/oauth-provider,
 * which Bluesky's PDSes run) refuses a `client_id` that is not https, whose host is an IP
 * address, `localhost` or a one-label name, or ends in a reserved name (.test, .local,
 * .localhost, .invalid, .example): see client-utils.ts and oauth-client-id-discoverable.ts there.
 */
export function oauthAvailability(publicUrl: string): Availability {
  const clientId = `${publicUrl}${CLIENT_METADATA_PATH}`;
  const url = new URL(publicUrl);
  if (url.protocol !== 'https:') {
    return {
      ok: false,
      reason: `Connect with Bluesky needs PUBLIC_URL to be an https address that Bluesky's servers can reach (it is ${publicUrl}); until then, connect with an app password`,
    };
  }
  const { isLocalHostname, isOAuthClientIdDiscoverable } = atprotoOAuth();
  if (!isOAuthClientIdDiscoverable(clientId) || isLocalHostname(url.hostname)) {
    return {
      ok: false,
      reason: `Connect with Bluesky needs PUBLIC_URL to be a public https name (not an IP address, localhost or a .test/.local/.example name; it is ${publicUrl}); until then, connect with an app password`,
    };
  }
  return { ok: true };
}

/** A stable key id: the first 16 hex digits of the SHA-256 of the public key's coordinates (of a public or private JWK). */
export function keyIdFor(publicJwk: object): string {
  const { crv, x, y } = publicJwk as { crv?: unknown; x?: unknown; y?: unknown };
  const canonical = JSON.stringify({ crv, kty: 'EC', x, y });
  return `herald-${createHash('sha256').update(canonical).digest('hex').slice(0, 16)}`;
}

export class ClientKeyError extends Error {}

/**
 * BLUESKY_OAUTH_PRIVATE_KEY: an ES256 (P-256) private key as PKCS#8 PEM or as a JWK. The error
 * never repeats the value (it is a private key).
 */
export async function parseClientKey(value: string): Promise<Key> {
  const { JoseKey } = atprotoOAuth();
  const text = value.trim();
  let key: Key;
  try {
    if (text.startsWith('-----BEGIN')) {
      const loaded = await JoseKey.fromPKCS8(text, CLIENT_KEY_ALG);
      key = await JoseKey.fromJWK({ ...loaded.privateJwk }, keyIdFor(loaded.privateJwk ?? {}));
    } else {
      const jwk = JSON.parse(text) as Record<string, unknown>;
      const { kid, ...rest } = jwk;
      key = await JoseKey.fromJWK(rest, typeof kid === 'string' && kid !== '' ? kid : keyIdFor(rest));
    }
  } catch {
    throw new ClientKeyError(
      'BLUESKY_OAUTH_PRIVATE_KEY is not an ES256 private key (PKCS#8 PEM, e.g. `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256`, or a JWK)',
    );
  }
  if (!key.isPrivate || !key.algorithms.includes(CLIENT_KEY_ALG)) {
    throw new ClientKeyError('BLUESKY_OAUTH_PRIVATE_KEY must be a P-256 (ES256) private key, not a public key or another curve');
  }
  return key;
}

/** A new client key (when none is configured or stored yet). */
export async function generateClientKey(): Promise<Key> {
  const { JoseKey } = atprotoOAuth();
  const probe = await JoseKey.generate([CLIENT_KEY_ALG]);
  return JoseKey.fromJWK({ ...probe.privateJwk, kid: undefined }, keyIdFor(probe.privateJwk ?? {}));
}

/** The key from the JSON it is stored as (sealed) in bluesky_oauth_keys. */
export function loadStoredKey(json: string, kid: string): Promise<Key> {
  return atprotoOAuth().JoseKey.fromJWK(json, kid);
}
