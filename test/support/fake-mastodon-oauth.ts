import { createHash, randomBytes } from 'node:crypto';
import type * as http from 'node:http';
import type { FakeMastodon, FakeRequest } from './fake-mastodon';

/**
 * The OAuth side of the loopback Mastodon instance (./fake-mastodon.ts), for "Connect with
 * Mastodon". No Mastodon server can run here; each behaviour follows Mastodon's documentation of
 * its apps and OAuth methods (read 2026-12), as docs/mastodon-oauth.md records what Herald relies on,
 * and OAuth 2.0 (RFC 6749) and PKCE (RFC 7636), which Mastodon's OAuth endpoints implement:
 *
 * - `POST /api/v1/apps` (JSON or form: `client_name`, `redirect_uris`, `scopes`, `website`)
 *   registers a client: 200 with the Application (`id`, `name`, `scopes`, `redirect_uri`,
 *   `redirect_uris`, `client_id`, `client_secret`, and from 4.4 `client_secret_expires_at`, 0 when
 *   it never expires); 422 `{"error":"Validation failed: …"}` without a name or with a redirect URI
 *   that is not absolute.
 * - `GET /.well-known/oauth-authorization-server` (4.3+, RFC 8414): the endpoints, the scopes and
 *   `code_challenge_methods_supported: ["S256"]`. An instance before 4.3 has no such document
 *   (404) and no PKCE: it ignores `code_challenge` (`pkce = false` makes this fake such an
 *   instance: 4.2, with the Application as 4.2 answers it).
 * - `GET /oauth/authorize?response_type=code&client_id&redirect_uri&scope&state
 *   [&code_challenge&code_challenge_method=S256]`: the signed-in person's consent page
 *   ("Authorize" / "Deny"). An unknown client or a redirect URI the app did not register shows an
 *   error page and sends nothing back; a scope the app was not registered with goes back as
 *   `error=invalid_scope`; on a 4.3+ instance a challenge method other than S256 goes back as
 *   `error=invalid_request`. "Authorize" sends the browser to `redirect_uri?code&state`; "Deny" to
 *   `redirect_uri?error=access_denied&error_description=…&state`. Codes are used once and expire
 *   after 10 minutes.
 * - `POST /oauth/token` (form or JSON: `grant_type=authorization_code`, `code`, `client_id`,
 *   `client_secret`, `redirect_uri`, `code_verifier`): 200 `{ access_token, token_type: "Bearer",
 *   scope, created_at }`. A wrong client or secret (or an expired secret) is 401
 *   `invalid_client`; a code that is unknown, used, expired, of another client or redirect URI,
 *   or whose challenge the verifier does not match (or a verifier for a code issued without a
 *   challenge) is 400 `invalid_grant`. Tokens do not expire; `POST /oauth/revoke` (`client_id`,
 *   `client_secret`, `token`) ends one: it answers 401 from then on.
 */

export interface FakeApp {
  id: string;
  name: string;
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  scopes: string[];
  /** Unix seconds; 0: never. */
  secretExpiresAt: number;
}

interface PendingCode {
  clientId: string;
  redirectUri: string;
  scopes: string[];
  accountId: string;
  challenge: string | null;
  expiresAt: number;
}

const DENIED = 'The resource owner or authorization server denied the request.';
const INVALID_CLIENT =
  'Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.';
const INVALID_GRANT =
  'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.';

export class FakeMastodonOAuth {
  /** A 4.3+ instance (the metadata document, PKCE with S256); false: a 4.2 instance, without either. */
  pkce = true;
  /** A 4.4 instance's `client_secret_expires_at`, as seconds from registration; null: 0 (never). */
  secretLifetimeSeconds: number | null = null;
  /** Scopes the next token reports (default: what was asked). */
  grantScopes: string[] | null = null;
  /** The account signed in at the instance's consent page. */
  signedInAs: string;
  /** Answers no registration until this many are waiting, then all of them: people registering at the same moment. */
  holdRegistrations = 0;
  readonly apps: FakeApp[] = [];
  readonly authorizations: URLSearchParams[] = [];
  readonly tokenRequests: URLSearchParams[] = [];
  readonly issued: { accessToken: string; accountId: string; clientId: string }[] = [];
  readonly revoked: string[] = [];
  private readonly codes = new Map<string, PendingCode>();
  private readonly held: (() => void)[] = [];

  constructor(private readonly instance: FakeMastodon) {
    this.signedInAs = instance.accountId;
    instance.extensions.push((req, res) => this.handle(req, res));
  }

  private async handle(req: FakeRequest, res: http.ServerResponse): Promise<boolean> {
    const url = new URL(req.path, this.instance.url);
    const route = `${req.method} ${url.pathname}`;
    switch (route) {
      case 'POST /api/v1/apps':
        await this.register(req, res);
        return true;
      case 'GET /.well-known/oauth-authorization-server':
        if (!this.pkce) html(res, 404, '<h1>The page you are looking for isn’t here.</h1>');
        else json(res, 200, this.metadata());
        return true;
      case 'GET /oauth/authorize':
        this.consent(url.searchParams, res);
        return true;
      case 'POST /oauth/authorize':
        this.decide(form(req), res);
        return true;
      case 'POST /oauth/token':
        this.token(form(req), res);
        return true;
      case 'POST /oauth/revoke':
        this.revoke(form(req), res);
        return true;
      default:
        return false;
    }
  }

  private async register(req: FakeRequest, res: http.ServerResponse): Promise<void> {
    const body = form(req);
    if (this.holdRegistrations > 0) {
      await new Promise<void>((resolve) => {
        this.held.push(resolve);
        if (this.held.length >= this.holdRegistrations) {
          this.holdRegistrations = 0;
          for (const release of this.held.splice(0)) release();
        }
      });
    }
    const name = body.get('client_name') ?? '';
    if (name.trim() === '') return json(res, 422, { error: "Validation failed: Application name can't be blank" });
    const uris = body
      .getAll('redirect_uris')
      .flatMap((u) => u.split('\n'))
      .filter((u) => u !== '');
    if (uris.length === 0 || uris.some((u) => !/^[a-z][a-z0-9+.-]*:\/\/\S+$/i.test(u))) {
      return json(res, 422, { error: 'Validation failed: Redirect URI must be an absolute URI.' });
    }
    const app: FakeApp = {
      id: String(this.apps.length + 1),
      name,
      clientId: randomBytes(32).toString('base64url'),
      clientSecret: randomBytes(32).toString('base64url'),
      redirectUris: uris,
      scopes: (body.get('scopes') ?? 'read').split(' ').filter((s) => s !== ''),
      secretExpiresAt: this.secretLifetimeSeconds === null ? 0 : Math.floor(Date.now() / 1000) + this.secretLifetimeSeconds,
    };
    this.apps.push(app);
    const common = { id: app.id, name: app.name, website: body.get('website'), redirect_uri: uris.join('\n'), vapid_key: 'BFake' };
    // 4.3 added scopes and redirect_uris to the answer, 4.4 client_secret_expires_at.
    json(
      res,
      200,
      this.pkce
        ? {
            ...common,
            scopes: app.scopes,
            redirect_uris: uris,
            client_id: app.clientId,
            client_secret: app.clientSecret,
            client_secret_expires_at: app.secretExpiresAt,
          }
        : { ...common, client_id: app.clientId, client_secret: app.clientSecret },
    );
  }

  private metadata(): unknown {
    const base = this.instance.url;
    return {
      issuer: `${base}/`,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      revocation_endpoint: `${base}/oauth/revoke`,
      app_registration_endpoint: `${base}/api/v1/apps`,
      scopes_supported: ['read', 'write', 'write:statuses', 'write:media', 'read:accounts', 'follow', 'push'],
      response_types_supported: ['code'],
      response_modes_supported: ['query', 'fragment', 'form_post'],
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    };
  }

  private consent(q: URLSearchParams, res: http.ServerResponse): void {
    this.authorizations.push(q);
    const app = this.apps.find((a) => a.clientId === q.get('client_id'));
    const redirectUri = q.get('redirect_uri') ?? '';
    if (!app) return html(res, 401, `<h1>An error has occurred</h1><p>${INVALID_CLIENT}</p>`);
    if (!app.redirectUris.includes(redirectUri))
      return html(res, 400, '<h1>An error has occurred</h1><p>The redirect uri included is not valid.</p>');
    const back = (params: Record<string, string>) => redirect(res, withQuery(redirectUri, { ...params, state: q.get('state') ?? '' }));
    if (q.get('response_type') !== 'code') return back({ error: 'unsupported_response_type' });
    const scopes = (q.get('scope') ?? 'read').split(' ').filter((s) => s !== '');
    if (scopes.some((s) => !app.scopes.includes(s)))
      return back({ error: 'invalid_scope', error_description: 'The requested scope is invalid.' });
    const challenge = this.pkce ? q.get('code_challenge') : null;
    if (challenge !== null && q.get('code_challenge_method') !== 'S256') {
      return back({ error: 'invalid_request', error_description: 'The code challenge method must be S256.' });
    }
    const person = this.instance.people.get(this.signedInAs)!;
    const hidden = Object.entries({
      client_id: app.clientId,
      redirect_uri: redirectUri,
      state: q.get('state') ?? '',
      scope: scopes.join(' '),
      code_challenge: challenge ?? '',
    })
      .map(([k, v]) => `<input type="hidden" name="${k}" value="${escapeHtml(v)}">`)
      .join('');
    html(
      res,
      200,
      `<h1>Authorization required</h1><p>Signed in as @${escapeHtml(person.username)}.</p>` +
        `<p><strong>${escapeHtml(app.name)}</strong> would like permission to access your account: ${escapeHtml(scopes.join(', '))}.</p>` +
        `<form method="post" action="/oauth/authorize">${hidden}<button name="decision" value="authorize">Authorize</button> <button name="decision" value="deny">Deny</button></form>`,
    );
  }

  private decide(f: URLSearchParams, res: http.ServerResponse): void {
    const redirectUri = f.get('redirect_uri') ?? '';
    const app = this.apps.find((a) => a.clientId === f.get('client_id'));
    if (!app || !app.redirectUris.includes(redirectUri)) return html(res, 400, '<h1>An error has occurred</h1>');
    const state = f.get('state') ?? '';
    if (f.get('decision') !== 'authorize')
      return redirect(res, withQuery(redirectUri, { error: 'access_denied', error_description: DENIED, state }));
    const code = randomBytes(32).toString('base64url');
    this.codes.set(code, {
      clientId: app.clientId,
      redirectUri,
      scopes: (f.get('scope') ?? '').split(' ').filter((s) => s !== ''),
      accountId: this.signedInAs,
      challenge: f.get('code_challenge') || null,
      expiresAt: Date.now() + 10 * 60_000,
    });
    redirect(res, withQuery(redirectUri, { code, state }));
  }

  private token(f: URLSearchParams, res: http.ServerResponse): void {
    this.tokenRequests.push(f);
    if (f.get('grant_type') !== 'authorization_code') {
      return json(res, 400, {
        error: 'unsupported_grant_type',
        error_description: 'The authorization grant type is not supported by the authorization server.',
      });
    }
    const app = this.client(f);
    if (!app) return json(res, 401, { error: 'invalid_client', error_description: INVALID_CLIENT });
    const code = f.get('code') ?? '';
    const pending = this.codes.get(code);
    this.codes.delete(code);
    const verifier = f.get('code_verifier');
    const pkceOk =
      pending?.challenge == null
        ? verifier === null
        : verifier !== null && createHash('sha256').update(verifier).digest('base64url') === pending.challenge;
    if (
      !pending ||
      pending.expiresAt < Date.now() ||
      pending.clientId !== app.clientId ||
      pending.redirectUri !== f.get('redirect_uri') ||
      !pkceOk
    ) {
      return json(res, 400, { error: 'invalid_grant', error_description: INVALID_GRANT });
    }
    const accessToken = this.instance.issueToken(pending.accountId);
    this.issued.push({ accessToken, accountId: pending.accountId, clientId: app.clientId });
    json(res, 200, {
      access_token: accessToken,
      token_type: 'Bearer',
      scope: (this.grantScopes ?? pending.scopes).join(' '),
      created_at: Math.floor(Date.now() / 1000),
    });
  }

  private revoke(f: URLSearchParams, res: http.ServerResponse): void {
    if (!this.client(f))
      return json(res, 403, { error: 'unauthorized_client', error_description: 'You are not authorized to revoke this token' });
    const token = f.get('token') ?? '';
    this.instance.revoke(token);
    this.revoked.push(token);
    json(res, 200, {});
  }

  /** The app whose id and secret the request carries, while its secret has not expired. */
  private client(f: URLSearchParams): FakeApp | null {
    const app = this.apps.find((a) => a.clientId === f.get('client_id') && a.clientSecret === f.get('client_secret'));
    if (!app || (app.secretExpiresAt !== 0 && app.secretExpiresAt * 1000 <= Date.now())) return null;
    return app;
  }
}

/** The instance's OAuth endpoints, on `instance`. */
export function withOAuth(instance: FakeMastodon): FakeMastodonOAuth {
  return new FakeMastodonOAuth(instance);
}

/** A form body (form-encoded, or JSON as Mastodon also takes). */
function form(req: FakeRequest): URLSearchParams {
  const text = req.body.toString('utf8');
  if (String(req.headers['content-type'] ?? '').startsWith('application/json')) {
    const out = new URLSearchParams();
    try {
      for (const [k, v] of Object.entries(JSON.parse(text) as Record<string, unknown>)) {
        for (const item of Array.isArray(v) ? v : [v]) if (item !== null && item !== undefined) out.append(k, String(item));
      }
    } catch {
      // an empty form: refused by the route
    }
    return out;
  }
  return new URLSearchParams(text);
}

function withQuery(base: string, params: Record<string, string>): string {
  const url = new URL(base);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.href;
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

function html(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
  res.end(`<!doctype html><html lang="en"><title>Fake Mastodon</title>${body}</html>`);
}

function redirect(res: http.ServerResponse, to: string): void {
  res.writeHead(302, { location: to });
  res.end();
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
