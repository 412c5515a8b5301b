import { createHash, createHmac, hkdfSync } from 'node:crypto';

/**
 * The pure parts of "Connect with Mastodon": OAuth 2.0's authorization code flow against
 * whichever instance a person names, as Mastodon documents it (docs/mastodon-oauth.md records the parts Herald relies on):
 *
 * 1. Herald registers itself on the instance once (`POST /api/v1/apps`: `client_name`,
 *    `redirect_uris`, `scopes`) and gets a `client_id` and `client_secret` (with, from 4.4, a
 *    `client_secret_expires_at`, 0 for never); the registration is kept per instance
 *    (mastodon-apps.ts).
 * 2. The browser goes to `GET {instance}/oauth/authorize?response_type=code&client_id&
 *    redirect_uri&scope&state`, with `code_challenge` and `code_challenge_method=S256` when the
 *    instance lists S256 in `/.well-known/oauth-authorization-server` (4.3 and later; older
 *    instances have no such document and no PKCE).
 * 3. The instance sends it back to `redirect_uri?code&state`, or `?error=access_denied&
 *    error_description&state` when the person denies access.
 * 4. Herald posts `grant_type=authorization_code&code&client_id&client_secret&redirect_uri`
 *    (and `code_verifier`) to `{instance}/oauth/token` and gets `{ access_token, token_type,
 *    scope, created_at }`. Mastodon's tokens do not expire; they work until revoked
 *    (`POST /oauth/revoke`).
 *
 * Every function here is a function of its inputs: no clock, no randomness, no I/O.
 */

/** Post statuses, upload their images, and read which account signed in: nothing more. */
export const MASTODON_SCOPES: readonly string[] = ['write:statuses', 'write:media', 'read:accounts'];

/** How long a person has to sign in and consent at the instance. */
export const FLOW_TTL_MS = 15 * 60_000;

/**
 * Where instances send the browser back (under PUBLIC_URL): the settings page's route
 * (src/settings/connect/mastodon-connect.controller.ts). It is part of every registration: a
 * new PUBLIC_URL means a new registration on each instance, made on first use.
 */
export const CALLBACK_PATH = '/settings/mastodon/callback';

/** The name the instance shows on its consent screen and in the person's list of authorized apps. */
export const CLIENT_NAME = 'Herald';

const MAX_URL_LENGTH = 2048;

/** A refusal of the address a person gave, worded for them. */
export class InstanceAddressError extends Error {}

/**
 * The instance a person named, as its origin (`https://mastodon.social`). People name an
 * instance the way they see it: `mastodon.social`, `https://mastodon.social/`, their handle
 * `@ada@mastodon.social`, or a page of it (`https://mastodon.social/@ada`). Mastodon serves its
 * API and its OAuth endpoints from the root of its host, so the origin is all that is kept: a
 * path, a query or a fragment are let go. https only: the client secret and the code travel to
 * the instance, so a plain-http address is refused unless `allowPlainHttp` (a test's or a LAN's
 * instance, with HERALD_ALLOW_PRIVATE_URLS). Throws InstanceAddressError.
 */
export function normalizeInstanceUrl(raw: string, allowPlainHttp: boolean): string {
  const example = 'e.g. mastodon.social or https://social.example.org';
  let text = raw.trim();
  if (text === '') throw new InstanceAddressError(`Give the address of your Mastodon instance (${example}).`);
  if (text.length > MAX_URL_LENGTH) throw new InstanceAddressError(`The instance's address must be at most ${MAX_URL_LENGTH} characters.`);
  // A handle: @name@host (or name@host) names its instance after the last @.
  const handle = /^@?[^\s@/:]+@([^\s@/:]+(?::\d+)?)$/.exec(text);
  if (handle) text = handle[1];
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) text = `https://${text}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InstanceAddressError(`“${raw.trim().slice(0, 100)}” is not an address of a Mastodon instance (${example}).`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new InstanceAddressError('The instance address must not contain a user name or password.');
  }
  if (url.hostname === '') throw new InstanceAddressError(`Give the address of your Mastodon instance (${example}).`);
  if (url.protocol === 'http:' && !allowPlainHttp) {
    throw new InstanceAddressError(
      `Mastodon instances are reached over https: give https://${url.host} (plain http is refused unless the operator allows private addresses).`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new InstanceAddressError(`The instance address must start with https:// (${example}).`);
  }
  return url.origin;
}

/** The body of `POST /api/v1/apps` (JSON). A single redirect URI as a string: instances before 4.3 take no list. */
export function appRegistrationBody(redirectUri: string, scopes: readonly string[]): Record<string, string> {
  return { client_name: CLIENT_NAME, redirect_uris: redirectUri, scopes: scopes.join(' ') };
}

/** A registration as an instance answers `POST /api/v1/apps` (an Application with its credentials). */
export interface AppCredentials {
  clientId: string;
  clientSecret: string;
  /** From `client_secret_expires_at` (4.4+); null: never (0) or not said (before 4.4). */
  secretExpiresAt: Date | null;
}

const CREDENTIAL = /^[\x21-\x7e]{1,2000}$/;

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** The credentials in a `POST /api/v1/apps` answer, or null when it has none usable. */
export function parseAppRegistration(bodyText: string): AppCredentials | null {
  const app = record(parseJson(bodyText));
  const clientId = app.client_id;
  const clientSecret = app.client_secret;
  if (typeof clientId !== 'string' || !CREDENTIAL.test(clientId)) return null;
  if (typeof clientSecret !== 'string' || !CREDENTIAL.test(clientSecret)) return null;
  const expires = app.client_secret_expires_at;
  const secretExpiresAt =
    typeof expires === 'number' && Number.isFinite(expires) && expires > 0 && expires < 1e11 ? new Date(expires * 1000) : null;
  return { clientId, clientSecret, secretExpiresAt };
}

/**
 * Whether a kept registration can start a flow now: its secret must outlive the flow (a person
 * may take FLOW_TTL_MS to consent, and the secret is needed at the callback), and it must have
 * been registered with the scopes Herald asks for today. Otherwise Herald registers again.
 */
export function registrationUsable(reg: { secretExpiresAt: Date | null; scopes: string }, scopes: readonly string[], now: Date): boolean {
  if (reg.scopes !== scopes.join(' ')) return false;
  return reg.secretExpiresAt === null || reg.secretExpiresAt.getTime() > now.getTime() + FLOW_TTL_MS;
}

/**
 * Whether the instance offers PKCE with S256, from its `/.well-known/oauth-authorization-server`
 * document (RFC 8414 `code_challenge_methods_supported`). An instance without the document
 * (Mastodon before 4.3: 404), or one that does not list S256, gets the plain code flow.
 */
export function offersS256(status: number, bodyText: string): boolean {
  if (status !== 200) return false;
  const methods = record(parseJson(bodyText)).code_challenge_methods_supported;
  return Array.isArray(methods) && methods.includes('S256');
}

/**
 * The key the code verifiers are made with: derived from HERALD_SECRET_KEY for this one use
 * (HKDF), so the key that encrypts credentials is never itself an HMAC key.
 */
export function verifierKey(secretKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', secretKey, Buffer.alloc(0), 'herald/mastodon-pkce/v1', 32));
}

/**
 * The PKCE code verifier of the flow whose Herald state is `state`: HMAC-SHA256 of the state
 * under `key` (verifierKey), base64url: 43 characters of RFC 7636's unreserved set, 256 bits.
 *
 * Why derived and not stored: the verifier must be known again at the callback, and the
 * callback already brings the state back. Deriving it keeps nothing more at rest (the state
 * itself is stored only as its SHA-256), and it stays secret where it must: the state travels
 * through the browser, but without HERALD_SECRET_KEY nobody can turn a state into its verifier,
 * and only the verifier's S256 hash ever leaves Herald before the code is exchanged. Each state
 * is random and used once, so each verifier is too. Hosts that share a database share the key,
 * so a callback may land on any of them.
 */
export function codeVerifier(key: Buffer, state: string): string {
  return createHmac('sha256', key).update(state, 'utf8').digest('base64url');
}

/** RFC 7636's S256 code challenge: base64url(SHA-256(verifier)). */
export function codeChallenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** The instance's consent page for this flow. `codeChallenge` null: the plain code flow (no PKCE). */
export function authorizationUrl(
  instanceUrl: string,
  p: { clientId: string; redirectUri: string; state: string; scopes: readonly string[]; codeChallenge: string | null },
): URL {
  const url = new URL('/oauth/authorize', instanceUrl);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', p.clientId);
  url.searchParams.set('redirect_uri', p.redirectUri);
  url.searchParams.set('scope', p.scopes.join(' '));
  url.searchParams.set('state', p.state);
  if (p.codeChallenge !== null) {
    url.searchParams.set('code_challenge', p.codeChallenge);
    url.searchParams.set('code_challenge_method', 'S256');
  }
  return url;
}

/** The body of the code-for-token exchange (form-encoded). `codeVerifier` null: the flow had no PKCE. */
export function tokenRequestBody(p: {
  code: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  codeVerifier: string | null;
}): string {
  const body = new URLSearchParams({
    grant_type: 'authorization_code',
    code: p.code,
    client_id: p.clientId,
    client_secret: p.clientSecret,
    redirect_uri: p.redirectUri,
  });
  if (p.codeVerifier !== null) body.set('code_verifier', p.codeVerifier);
  return body.toString();
}

export type TokenResult = { ok: true; accessToken: string; grantedScopes: string[] | null } | { ok: false; message: string };

const TOKEN = /^[\x21-\x7e]{1,4096}$/;

/** Replaces every secret in `text` (the client secret, the code) so a message can be shown. */
function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('[redacted]');
  return out;
}

/**
 * Reads the token endpoint's answer: the access token and the scopes granted (space-separated;
 * null when not said: RFC 6749 §5.1, then they are the requested ones). A refusal says the
 * instance's `error` and `error_description`; no message contains a token, a code or the client
 * secret (`secrets`).
 */
export function parseTokenResponse(host: string, status: number, bodyText: string, secrets: readonly string[]): TokenResult {
  const body = record(parseJson(bodyText));
  if (status !== 200) {
    const code = typeof body.error === 'string' ? body.error.slice(0, 100) : null;
    const description = typeof body.error_description === 'string' ? body.error_description.slice(0, 300) : null;
    const said = [code, description].filter((s) => s !== null).join(': ');
    return { ok: false, message: redact(`${host} refused to finish the connection (HTTP ${status}${said ? `, ${said}` : ''})`, secrets) };
  }
  const token = body.access_token;
  if (typeof token !== 'string' || !TOKEN.test(token)) return { ok: false, message: `${host} answered without a usable access token` };
  const scope = body.scope;
  return { ok: true, accessToken: token, grantedScopes: typeof scope === 'string' ? parseScopes(scope) : null };
}

export function parseScopes(value: string): string[] {
  return [...new Set(value.split(/\s+/).filter((s) => s !== ''))];
}

/**
 * The requested scopes a grant lacks. Mastodon's broad scopes include their parts (`write`
 * grants `write:statuses` and `write:media`, `read` grants `read:accounts`), so a token granted
 * the broad one has what Herald asked for. null granted: all were (RFC 6749 §5.1).
 */
export function missingScopes(requested: readonly string[], granted: readonly string[] | null): string[] {
  if (granted === null) return [];
  const has = new Set(granted);
  return requested.filter((s) => !has.has(s) && !has.has(s.split(':')[0]));
}

/**
 * What a person reads when the instance sent an error instead of a code. `access_denied` is the
 * person pressing "Deny" (RFC 6749 §4.1.2.1); anything else is the instance's own words.
 */
export function describeCallbackError(host: string, error: string, description: string): string {
  if (error === 'access_denied') {
    return `You denied Herald access at ${host}; nothing was changed. Connect again when you want Herald to post for that account.`;
  }
  const said = description ? `${error.slice(0, 100)}: ${description.slice(0, 300)}` : error.slice(0, 100);
  return `${host} did not authorize Herald (${said}). Nothing was changed.`;
}

/**
 * What Herald keeps with its state between the start of a flow and its callback (the accounts
 * module's account_connect_states, as the flow's `flow` text): the instance, the registration
 * the browser was sent with, and whether the flow used PKCE. Never a secret: the verifier is
 * derived again from the state (codeVerifier), the client secret read from the registration.
 */
export interface FlowNote {
  instanceUrl: string;
  clientId: string;
  pkce: boolean;
}

export function writeFlowNote(note: FlowNote): string {
  return JSON.stringify({ instanceUrl: note.instanceUrl, clientId: note.clientId, pkce: note.pkce });
}

export function readFlowNote(text: string | null): FlowNote | null {
  if (text === null) return null;
  const n = record(parseJson(text));
  if (typeof n.instanceUrl !== 'string' || typeof n.clientId !== 'string' || typeof n.pkce !== 'boolean') return null;
  return { instanceUrl: n.instanceUrl, clientId: n.clientId, pkce: n.pkce };
}
