import fc from 'fast-check';
import {
  appRegistrationBody,
  authorizationUrl,
  codeChallenge,
  codeVerifier,
  describeCallbackError,
  InstanceAddressError,
  missingScopes,
  normalizeInstanceUrl,
  offersS256,
  parseAppRegistration,
  parseTokenResponse,
  readFlowNote,
  registrationUsable,
  tokenRequestBody,
  verifierKey,
  writeFlowNote,
} from './mastodon-oauth';

const SCOPES = ['write:statuses', 'write:media', 'read:accounts'];

describe('normalizeInstanceUrl: the instance a person names, as its https origin', () => {
  it.each([
    ['mastodon.social', 'https://mastodon.social'],
    ['  Mastodon.Social  ', 'https://mastodon.social'],
    ['https://mastodon.social/', 'https://mastodon.social'],
    ['https://mastodon.social:443', 'https://mastodon.social'],
    ['https://social.example.org:8443/', 'https://social.example.org:8443'],
    ['@ada@mastodon.social', 'https://mastodon.social'],
    ['ada@fosstodon.org', 'https://fosstodon.org'],
    ['https://mastodon.social/@ada', 'https://mastodon.social'],
    ['https://mastodon.social/home?x=1#top', 'https://mastodon.social'],
    ['bücher.example', 'https://xn--bcher-kva.example'],
  ])('%j → %s', (raw, origin) => {
    expect(normalizeInstanceUrl(raw, false)).toBe(origin);
  });

  it('refuses plain http unless private addresses are allowed (the secret and the code travel to the instance)', () => {
    expect(() => normalizeInstanceUrl('http://mastodon.social', false)).toThrow(
      'Mastodon instances are reached over https: give https://mastodon.social',
    );
    expect(normalizeInstanceUrl('http://127.0.0.1:3000/', true)).toBe('http://127.0.0.1:3000');
  });

  it.each([
    ['', /Give the address of your Mastodon instance/],
    ['   ', /Give the address of your Mastodon instance/],
    ['https://ada:secret@mastodon.social', /must not contain a user name or password/],
    ['ftp://mastodon.social', /must start with https:\/\//],
    ['https://exa mple.org', /is not an address of a Mastodon instance/],
    ['x'.repeat(2049), /at most 2048 characters/],
  ])('refuses %j, saying why', (raw, why) => {
    expect(() => normalizeInstanceUrl(raw, true)).toThrow(InstanceAddressError);
    expect(() => normalizeInstanceUrl(raw, true)).toThrow(why);
  });

  it('never echoes a password it refuses', () => {
    try {
      normalizeInstanceUrl('https://ada:hunter2hunter2@mastodon.social', false);
      throw new Error('not refused');
    } catch (err) {
      expect((err as Error).message).not.toContain('hunter2');
    }
  });

  it('always answers an origin without a path, or refuses (any input)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.webUrl(), fc.domain()), (raw) => {
        let origin: string;
        try {
          origin = normalizeInstanceUrl(raw, false);
        } catch (err) {
          return err instanceof InstanceAddressError;
        }
        const url = new URL(origin);
        return url.protocol === 'https:' && url.origin === origin && url.username === '' && !origin.endsWith('/');
      }),
      { seed: 31, numRuns: 500 },
    );
  });
});

describe('the app registration', () => {
  it('registers Herald with its one redirect URI and the three scopes', () => {
    expect(appRegistrationBody('https://herald.example/settings/mastodon/callback', SCOPES)).toEqual({
      client_name: 'Herald',
      redirect_uris: 'https://herald.example/settings/mastodon/callback',
      scopes: 'write:statuses write:media read:accounts',
    });
  });

  it("reads the credentials and a 4.4 instance's secret expiry (0: never; absent before 4.4)", () => {
    expect(parseAppRegistration(JSON.stringify({ id: '1', client_id: 'cid', client_secret: 'sec', client_secret_expires_at: 0 }))).toEqual({
      clientId: 'cid',
      clientSecret: 'sec',
      secretExpiresAt: null,
    });
    expect(parseAppRegistration(JSON.stringify({ client_id: 'cid', client_secret: 'sec' }))?.secretExpiresAt).toBeNull();
    expect(
      parseAppRegistration(JSON.stringify({ client_id: 'cid', client_secret: 'sec', client_secret_expires_at: 1_800_000_000 })),
    ).toEqual({
      clientId: 'cid',
      clientSecret: 'sec',
      secretExpiresAt: new Date('2027-01-15T08:00:00.000Z'),
    });
    for (const bad of ['<html>', '{}', JSON.stringify({ client_id: 'cid' }), JSON.stringify({ client_id: 'a b', client_secret: 's' })]) {
      expect(parseAppRegistration(bad)).toBeNull();
    }
  });

  it('uses a kept registration while its secret outlives a flow and its scopes are the ones asked for', () => {
    const now = new Date('2026-12-06T10:00:00Z');
    const scopes = SCOPES.join(' ');
    expect(registrationUsable({ secretExpiresAt: null, scopes }, SCOPES, now)).toBe(true);
    expect(registrationUsable({ secretExpiresAt: new Date('2026-12-06T10:16:00Z'), scopes }, SCOPES, now)).toBe(true);
    // Expiring within the 15 minutes a person has to consent: registered again.
    expect(registrationUsable({ secretExpiresAt: new Date('2026-12-06T10:14:00Z'), scopes }, SCOPES, now)).toBe(false);
    expect(registrationUsable({ secretExpiresAt: new Date('2026-12-06T09:00:00Z'), scopes }, SCOPES, now)).toBe(false);
    expect(registrationUsable({ secretExpiresAt: null, scopes: 'read write' }, SCOPES, now)).toBe(false);
  });
});

describe('PKCE', () => {
  it('is used when the metadata document lists S256, not without the document or without S256', () => {
    expect(offersS256(200, JSON.stringify({ code_challenge_methods_supported: ['S256'] }))).toBe(true);
    expect(offersS256(200, JSON.stringify({ code_challenge_methods_supported: ['plain'] }))).toBe(false);
    expect(offersS256(200, JSON.stringify({ issuer: 'x' }))).toBe(false);
    expect(offersS256(404, '<h1>The page you are looking for isn’t here.</h1>')).toBe(false);
    expect(offersS256(200, 'not json')).toBe(false);
  });

  it("computes RFC 7636's S256 challenge (the RFC's own example)", () => {
    expect(codeChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });

  it('derives the verifier from the state under the server key: the same each time, another for another state or key', () => {
    const key = verifierKey(Buffer.alloc(32, 7));
    const other = verifierKey(Buffer.alloc(32, 8));
    const v = codeVerifier(key, 'state-1');
    expect(codeVerifier(key, 'state-1')).toBe(v);
    expect(codeVerifier(key, 'state-2')).not.toBe(v);
    expect(codeVerifier(other, 'state-1')).not.toBe(v);
    // The key that encrypts credentials is not the HMAC key itself.
    expect(verifierKey(Buffer.alloc(32, 7)).equals(Buffer.alloc(32, 7))).toBe(false);
  });

  it('makes verifiers RFC 7636 accepts: 43 characters of its unreserved set', () => {
    const key = verifierKey(Buffer.alloc(32, 1));
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 200 }), (state) => {
        const v = codeVerifier(key, state);
        return /^[A-Za-z0-9\-._~]{43,128}$/.test(v) && v.length === 43;
      }),
      { seed: 7636, numRuns: 300 },
    );
  });
});

describe('the authorization request and the token exchange', () => {
  const redirectUri = 'https://herald.example/settings/mastodon/callback';

  it('sends the browser to /oauth/authorize with the scopes, the state and the S256 challenge', () => {
    const url = authorizationUrl('https://mastodon.social', {
      clientId: 'cid',
      redirectUri,
      state: 's1',
      scopes: SCOPES,
      codeChallenge: 'ch',
    });
    expect(url.origin + url.pathname).toBe('https://mastodon.social/oauth/authorize');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: 'code',
      client_id: 'cid',
      redirect_uri: redirectUri,
      scope: 'write:statuses write:media read:accounts',
      state: 's1',
      code_challenge: 'ch',
      code_challenge_method: 'S256',
    });
  });

  it('sends no challenge to an instance without PKCE, and no verifier in its exchange', () => {
    const url = authorizationUrl('http://127.0.0.1:8080', {
      clientId: 'cid',
      redirectUri,
      state: 's1',
      scopes: SCOPES,
      codeChallenge: null,
    });
    expect(url.href.startsWith('http://127.0.0.1:8080/oauth/authorize?')).toBe(true);
    expect(url.searchParams.has('code_challenge')).toBe(false);
    expect(url.searchParams.has('code_challenge_method')).toBe(false);
    const body = new URLSearchParams(tokenRequestBody({ code: 'c', clientId: 'id', clientSecret: 's', redirectUri, codeVerifier: null }));
    expect(Object.fromEntries(body)).toEqual({
      grant_type: 'authorization_code',
      code: 'c',
      client_id: 'id',
      client_secret: 's',
      redirect_uri: redirectUri,
    });
  });

  it('exchanges the code with the client secret and, with PKCE, the verifier', () => {
    const body = new URLSearchParams(tokenRequestBody({ code: 'c', clientId: 'id', clientSecret: 's', redirectUri, codeVerifier: 'v' }));
    expect(body.get('code_verifier')).toBe('v');
    expect(body.get('client_secret')).toBe('s');
  });

  it('reads the token and the scopes granted; a refusal names the error without a secret', () => {
    expect(
      parseTokenResponse(
        'm.example',
        200,
        JSON.stringify({ access_token: 'tok', token_type: 'Bearer', scope: 'write:statuses read:accounts' }),
        [],
      ),
    ).toEqual({
      ok: true,
      accessToken: 'tok',
      grantedScopes: ['write:statuses', 'read:accounts'],
    });
    expect(parseTokenResponse('m.example', 200, JSON.stringify({ access_token: 'tok' }), [])).toEqual({
      ok: true,
      accessToken: 'tok',
      grantedScopes: null,
    });
    const refused = parseTokenResponse(
      'm.example',
      400,
      JSON.stringify({
        error: 'invalid_grant',
        error_description: 'The provided authorization grant is invalid (code abc123code, secret s3cr3t-value)',
      }),
      ['s3cr3t-value', 'abc123code'],
    );
    expect(refused).toEqual({
      ok: false,
      message:
        'm.example refused to finish the connection (HTTP 400, invalid_grant: The provided authorization grant is invalid (code [redacted], secret [redacted]))',
    });
    expect(parseTokenResponse('m.example', 200, '<html>', [])).toEqual({
      ok: false,
      message: 'm.example answered without a usable access token',
    });
  });

  it('lists the scopes a grant lacks; a broad scope includes its parts', () => {
    expect(missingScopes(SCOPES, ['write:statuses', 'read:accounts'])).toEqual(['write:media']);
    expect(missingScopes(SCOPES, ['write', 'read'])).toEqual([]);
    expect(missingScopes(SCOPES, ['read'])).toEqual(['write:statuses', 'write:media']);
    expect(missingScopes(SCOPES, null)).toEqual([]);
  });

  it('says plainly when the person denied access, and passes on any other error', () => {
    expect(describeCallbackError('m.example', 'access_denied', 'The resource owner or authorization server denied the request.')).toBe(
      'You denied Herald access at m.example; nothing was changed. Connect again when you want Herald to post for that account.',
    );
    expect(describeCallbackError('m.example', 'invalid_scope', 'The requested scope is invalid.')).toBe(
      'm.example did not authorize Herald (invalid_scope: The requested scope is invalid.). Nothing was changed.',
    );
  });

  it('keeps the instance, the client id and whether PKCE was used between start and callback', () => {
    const note = { instanceUrl: 'https://mastodon.social', clientId: 'cid', pkce: true };
    expect(readFlowNote(writeFlowNote(note))).toEqual(note);
    expect(readFlowNote(null)).toBeNull();
    expect(readFlowNote('{"instanceUrl":"x"}')).toBeNull();
    expect(readFlowNote('nope')).toBeNull();
  });
});
