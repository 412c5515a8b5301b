import { randomBytes } from 'node:crypto';
import * as http from 'node:http';
import type * as net from 'node:net';

/**
 * LinkedIn's OAuth 2.0 authorization server and OpenID userinfo endpoint, on loopback, for the
 * settings page's "Connect with LinkedIn" tests. No real LinkedIn can run here, so this follows
 * LinkedIn's documentation of the 3-legged flow:
 *
 * - Authorization Code Flow (Microsoft Learn, LinkedIn authentication, "Authorization Code Flow"):
 *   `GET /oauth/v2/authorization?response_type=code&client_id&redirect_uri&state&scope` shows the
 *   member a consent screen; "Allow" redirects to `redirect_uri?code&state`, "Cancel" to
 *   `redirect_uri?error=user_cancelled_authorize&error_description=…&state`. The redirect_uri must
 *   be the one registered for the app, exactly. Codes live 30 minutes and are used once.
 *   `POST /oauth/v2/accessToken` (application/x-www-form-urlencoded: grant_type=authorization_code,
 *   code, client_id, client_secret, redirect_uri) answers `{ access_token, expires_in (60 days),
 *   scope, refresh_token?, refresh_token_expires_in? }`; refresh tokens only for approved partner
 *   apps (Programmatic Refresh Tokens). A bad code or redirect_uri is 400 `invalid_request`, a bad
 *   client secret 401 `invalid_client`.
 * - Sign In with LinkedIn using OpenID Connect (learn.microsoft.com/linkedin/consumer/integrations/
 *   self-serve/sign-in-with-linkedin-v2): `GET /v2/userinfo` with the bearer token answers `{ sub,
 *   name, given_name, family_name, picture, locale }`; a bad token is 401.
 */
export interface FakeLinkedInOAuth {
  url: string;
  clientId: string;
  clientSecret: string;
  /** The redirect URI registered for the app (Herald's PUBLIC_URL + /settings/linkedin/callback). */
  redirectUri: string;
  /** Scopes the next grant reports (default: what was asked). A member may lack a product's permission. */
  grantScopes: string[] | null;
  /** Partner apps get refresh tokens; self-serve apps do not (default). */
  issueRefreshToken: boolean;
  /** The member who signs in at the consent screen. */
  member: { sub: string; name: string };
  /** Every authorization request, as its query string. */
  readonly authorizations: URLSearchParams[];
  /** Every token request, as its form body. */
  readonly tokenRequests: URLSearchParams[];
  /** Tokens issued so far. */
  readonly issued: { accessToken: string; refreshToken: string | null; sub: string }[];
  close(): Promise<void>;
}

interface PendingCode {
  redirectUri: string;
  scope: string;
  sub: string;
  name: string;
  expiresAt: number;
}

export async function startFakeLinkedInOAuth(options: { redirectUri: string }): Promise<FakeLinkedInOAuth> {
  const codes = new Map<string, PendingCode>();
  const tokens = new Map<string, { sub: string; name: string }>();
  const sockets = new Set<net.Socket>();
  const fake: Omit<FakeLinkedInOAuth, 'url' | 'close'> = {
    clientId: `77test${randomBytes(4).toString('hex')}`,
    clientSecret: `secret-${randomBytes(12).toString('hex')}`,
    redirectUri: options.redirectUri,
    grantScopes: null,
    issueRefreshToken: false,
    member: { sub: 'yrZCpj2Z12', name: 'Ada Lovelace' },
    authorizations: [],
    tokenRequests: [],
    issued: [],
  };

  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const redirect = (res: http.ServerResponse, to: string) => {
    res.writeHead(302, { location: to });
    res.end();
  };
  const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'GET' && url.pathname === '/oauth/v2/authorization') {
        const q = url.searchParams;
        fake.authorizations.push(q);
        if (
          q.get('response_type') !== 'code' ||
          q.get('client_id') !== fake.clientId ||
          q.get('redirect_uri') !== fake.redirectUri ||
          !q.get('scope')
        ) {
          res.writeHead(400, { 'content-type': 'text/html' });
          res.end(
            '<!doctype html><title>LinkedIn</title><p>The redirect_uri does not match the registered value, or a parameter is missing.</p>',
          );
          return;
        }
        const hidden = ['redirect_uri', 'state', 'scope']
          .map((k) => `<input type="hidden" name="${k}" value="${escape(q.get(k) ?? '')}">`)
          .join('');
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(
          `<!doctype html><html lang="en"><title>LinkedIn</title><h1>Herald Test App would like to access your LinkedIn account</h1>` +
            `<p>Signed in as ${escape(fake.member.name)}. Permissions: ${escape(q.get('scope') ?? '')}</p>` +
            `<form method="get" action="/oauth/v2/decide">${hidden}<button name="decision" value="allow">Allow</button> <button name="decision" value="cancel">Cancel</button></form></html>`,
        );
        return;
      }
      if (req.method === 'GET' && url.pathname === '/oauth/v2/decide') {
        const q = url.searchParams;
        const back = new URL(q.get('redirect_uri') ?? '');
        if (q.get('decision') === 'allow') {
          const code = `AQ${randomBytes(24).toString('base64url')}`;
          codes.set(code, {
            redirectUri: back.href,
            scope: q.get('scope') ?? '',
            sub: fake.member.sub,
            name: fake.member.name,
            expiresAt: Date.now() + 30 * 60_000,
          });
          back.searchParams.set('code', code);
        } else {
          back.searchParams.set('error', 'user_cancelled_authorize');
          back.searchParams.set('error_description', 'The user cancelled the authorization');
        }
        back.searchParams.set('state', q.get('state') ?? '');
        redirect(res, back.href);
        return;
      }
      if (req.method === 'POST' && url.pathname === '/oauth/v2/accessToken') {
        const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
        fake.tokenRequests.push(form);
        if (!(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
          json(res, 400, { error: 'invalid_request', error_description: 'A required parameter "grant_type" is missing' });
          return;
        }
        if (form.get('client_id') !== fake.clientId || form.get('client_secret') !== fake.clientSecret) {
          json(res, 401, { error: 'invalid_client', error_description: 'Client authentication failed' });
          return;
        }
        const pending = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        if (
          form.get('grant_type') !== 'authorization_code' ||
          !pending ||
          pending.expiresAt < Date.now() ||
          pending.redirectUri !== form.get('redirect_uri')
        ) {
          json(res, 400, {
            error: 'invalid_request',
            error_description:
              'Unable to retrieve access token: appid/redirect uri/code verifier does not match authorization code. Or authorization code expired.',
          });
          return;
        }
        const accessToken = `AQV${randomBytes(32).toString('base64url')}`;
        const refreshToken = fake.issueRefreshToken ? `AQW${randomBytes(32).toString('base64url')}` : null;
        tokens.set(accessToken, { sub: pending.sub, name: pending.name });
        fake.issued.push({ accessToken, refreshToken, sub: pending.sub });
        // LinkedIn lists granted scopes comma-separated.
        const granted = fake.grantScopes ?? pending.scope.split(' ');
        json(res, 200, {
          access_token: accessToken,
          expires_in: 5_184_000,
          scope: granted.join(','),
          token_type: 'Bearer',
          ...(refreshToken ? { refresh_token: refreshToken, refresh_token_expires_in: 31_536_000 } : {}),
        });
        return;
      }
      if (req.method === 'GET' && url.pathname === '/v2/userinfo') {
        const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
        const member = tokens.get(token);
        if (!member) {
          json(res, 401, { serviceErrorCode: 65600, message: 'Invalid access token', status: 401 });
          return;
        }
        const [given, ...family] = member.name.split(' ');
        json(res, 200, {
          sub: member.sub,
          name: member.name,
          given_name: given,
          family_name: family.join(' '),
          picture: null,
          locale: { country: 'GB', language: 'en' },
        });
        return;
      }
      json(res, 404, { message: 'Not found', status: 404 });
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as net.AddressInfo;
  return Object.assign(fake, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  });
}
