/**
 * The pure parts of LinkedIn's OAuth 2.0 authorization code flow ("3-legged OAuth",
 * Microsoft Learn, LinkedIn authentication, "Authorization Code Flow"):
 *
 * 1. the browser goes to `GET {oauth}/oauth/v2/authorization?response_type=code&client_id&
 *    redirect_uri&state&scope` (scopes space-delimited);
 * 2. LinkedIn sends it back to `redirect_uri?code&state`, or `?error&error_description&state`
 *    when the member cancels (`user_cancelled_login`, `user_cancelled_authorize`);
 * 3. Herald posts `grant_type=authorization_code&code&client_id&client_secret&redirect_uri`
 *    (form-encoded) to `{oauth}/oauth/v2/accessToken` and gets `{ access_token, expires_in,
 *    refresh_token?, refresh_token_expires_in?, scope }` (refresh tokens only for partner apps).
 *
 * With `openid profile`, `GET {api}/v2/userinfo` answers the member's `sub`: the author URN is
 * `urn:li:person:{sub}`.
 */

/** Sign in (`openid profile`, for the member id) and post as the member (`w_member_social`). */
export const LINKEDIN_SCOPES: readonly string[] = ['openid', 'profile', 'w_member_social'];

/** How long a person has to finish the flow at LinkedIn. */
export const STATE_TTL_MS = 15 * 60_000;

/**
 * Where LinkedIn sends the browser back (under PUBLIC_URL): the settings page's route
 * (src/settings/connect/linkedin-connect.controller.ts). Operators register this exact URL with
 * their LinkedIn app, so it never moves.
 */
export const CALLBACK_PATH = '/settings/linkedin/callback';

export function authorizationUrl(
  oauthBaseUrl: string,
  p: { clientId: string; redirectUri: string; state: string; scopes: readonly string[] },
): string {
  // No `prompt=none`: the member always sees what Herald asks for.
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: p.clientId,
    redirect_uri: p.redirectUri,
    state: p.state,
    scope: p.scopes.join(' '),
  });
  return `${oauthBaseUrl}/oauth/v2/authorization?${query.toString()}`;
}

/** The body of the code-for-token exchange. */
export function tokenRequestBody(p: { code: string; clientId: string; clientSecret: string; redirectUri: string }): string {
  return new URLSearchParams({
    grant_type: 'authorization_code',
    code: p.code,
    client_id: p.clientId,
    client_secret: p.clientSecret,
    redirect_uri: p.redirectUri,
  }).toString();
}

/** LinkedIn writes granted scopes comma-separated; RFC 6749 space-separated. Both are read. */
export function parseScopes(value: string): string[] {
  return [...new Set(value.split(/[\s,]+/).filter((s) => s !== ''))];
}

export interface GrantedToken {
  accessToken: string;
  /** ISO 8601, from `expires_in` */
  expiresAt: string | null;
  refreshToken: string | null;
  /** null when LinkedIn did not list them (RFC 6749 §5.1: then they are the requested ones). */
  grantedScopes: string[] | null;
}

export type TokenResult = { ok: true; token: GrantedToken } | { ok: false; message: string };

const TOKEN = /^[\x21-\x7e]{1,4096}$/;

/** Reads the token endpoint's answer. Messages never contain a token, a code or the client secret. */
export function parseTokenResponse(status: number, bodyText: string, now: Date, secrets: readonly string[]): TokenResult {
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(bodyText);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
  } catch {
    // not JSON: described below
  }
  if (status !== 200) {
    const code = typeof body.error === 'string' ? body.error : null;
    const description = typeof body.error_description === 'string' ? body.error_description : null;
    const said = [code, description].filter((x) => x !== null).join(': ');
    return {
      ok: false,
      message: scrub(`LinkedIn refused to issue a token (HTTP ${status}${said ? `, ${said.slice(0, 300)}` : ''})`, secrets),
    };
  }
  const accessToken = body.access_token;
  if (typeof accessToken !== 'string' || !TOKEN.test(accessToken)) {
    return { ok: false, message: 'LinkedIn answered without a usable access token' };
  }
  const refresh = body.refresh_token;
  const expiresIn = body.expires_in;
  const expiresAt =
    typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0
      ? new Date(now.getTime() + Math.floor(expiresIn) * 1000).toISOString()
      : null;
  return {
    ok: true,
    token: {
      accessToken,
      expiresAt,
      refreshToken: typeof refresh === 'string' && TOKEN.test(refresh) ? refresh : null,
      grantedScopes: typeof body.scope === 'string' ? parseScopes(body.scope) : null,
    },
  };
}

/** Requested scopes LinkedIn did not grant (the member or the app's products lack them). */
export function missingScopes(requested: readonly string[], granted: readonly string[] | null): string[] {
  if (granted === null) return [];
  return requested.filter((s) => !granted.includes(s));
}

/** The member id from `/v2/userinfo`, or null when the answer has none usable. */
export function memberIdFrom(bodyText: string): string | null {
  try {
    const sub = (JSON.parse(bodyText) as { sub?: unknown }).sub;
    return typeof sub === 'string' && /^[A-Za-z0-9_-]{1,100}$/.test(sub) ? sub : null;
  } catch {
    return null;
  }
}

/** The name LinkedIn gives the member, for a new account's default name. */
export function memberNameFrom(bodyText: string): string | null {
  try {
    const name = (JSON.parse(bodyText) as { name?: unknown }).name;
    return typeof name === 'string' && name.trim() !== '' ? name.trim().slice(0, 200) : null;
  } catch {
    return null;
  }
}

/** What to tell a person LinkedIn sent back instead of a code. */
export function describeCallbackError(error: string, description: string): string {
  if (error === 'user_cancelled_login' || error === 'user_cancelled_authorize') {
    return 'The LinkedIn connection was cancelled at LinkedIn; nothing was changed.';
  }
  const said = description ? `: ${description.slice(0, 200)}` : '';
  return `LinkedIn did not authorize Herald (${error.slice(0, 100)}${said}); nothing was changed.`;
}

function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('[redacted]');
  return out;
}
