import {
  authorizationUrl,
  describeCallbackError,
  memberIdFrom,
  missingScopes,
  parseScopes,
  parseTokenResponse,
  tokenRequestBody,
} from './linkedin-oauth';

const now = new Date('2026-12-01T09:00:00Z');

describe('LinkedIn OAuth (pure parts)', () => {
  it('asks for openid profile w_member_social with the state, never prompt=none', () => {
    const url = new URL(
      authorizationUrl('https://www.linkedin.com', {
        clientId: 'cid',
        redirectUri: 'https://herald.example/settings/linkedin/callback',
        state: 's1',
        scopes: ['openid', 'profile', 'w_member_social'],
      }),
    );
    expect(url.origin + url.pathname).toBe('https://www.linkedin.com/oauth/v2/authorization');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: 'code',
      client_id: 'cid',
      redirect_uri: 'https://herald.example/settings/linkedin/callback',
      state: 's1',
      scope: 'openid profile w_member_social',
    });
    expect(url.searchParams.has('prompt')).toBe(false);
  });

  it('exchanges the code with a form-encoded body', () => {
    expect(
      Object.fromEntries(
        new URLSearchParams(tokenRequestBody({ code: 'c', clientId: 'id', clientSecret: 's', redirectUri: 'https://h/cb' })),
      ),
    ).toEqual({
      grant_type: 'authorization_code',
      code: 'c',
      client_id: 'id',
      client_secret: 's',
      redirect_uri: 'https://h/cb',
    });
  });

  it('reads a token answer: expiry from expires_in, optional refresh token, comma or space separated scopes', () => {
    const r = parseTokenResponse(
      200,
      JSON.stringify({ access_token: 'AQX', expires_in: 5_184_000, scope: 'openid,profile,w_member_social' }),
      now,
      [],
    );
    expect(r).toEqual({
      ok: true,
      token: {
        accessToken: 'AQX',
        expiresAt: '2027-01-30T09:00:00.000Z',
        refreshToken: null,
        grantedScopes: ['openid', 'profile', 'w_member_social'],
      },
    });
    const withRefresh = parseTokenResponse(
      200,
      JSON.stringify({ access_token: 'AQX', expires_in: 60, refresh_token: 'RT', scope: 'openid profile' }),
      now,
      [],
    );
    expect(withRefresh.ok && withRefresh.token.refreshToken).toBe('RT');
    expect(parseScopes(' a, b c,,a ')).toEqual(['a', 'b', 'c']);
  });

  it('says what LinkedIn refused without repeating a secret', () => {
    const r = parseTokenResponse(
      400,
      JSON.stringify({
        error: 'invalid_request',
        error_description:
          'Unable to retrieve access token: appid/redirect uri/code verifier does not match authorization code. secret=shh-123',
      }),
      now,
      ['shh-123'],
    );
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.message).toContain('HTTP 400, invalid_request: Unable to retrieve access token');
      expect(r.message).not.toContain('shh-123');
    }
    expect(parseTokenResponse(200, 'not json', now, [])).toEqual({ ok: false, message: 'LinkedIn answered without a usable access token' });
  });

  it('lists requested scopes that were not granted; an answer without scope means all were', () => {
    expect(missingScopes(['openid', 'profile', 'w_member_social'], ['openid', 'profile'])).toEqual(['w_member_social']);
    expect(missingScopes(['openid'], ['openid', 'email'])).toEqual([]);
    expect(missingScopes(['openid'], null)).toEqual([]);
  });

  it('reads the member id of /v2/userinfo', () => {
    expect(memberIdFrom('{"sub":"782bbtaQ","name":"Ada"}')).toBe('782bbtaQ');
    expect(memberIdFrom('{"sub":"../x"}')).toBeNull();
    expect(memberIdFrom('nope')).toBeNull();
  });

  it('explains a cancelled consent plainly', () => {
    expect(describeCallbackError('user_cancelled_authorize', 'The user cancelled the authorization')).toMatch(
      /cancelled at LinkedIn; nothing was changed/,
    );
    expect(describeCallbackError('unauthorized_scope_error', 'Scope "w_member_social" is not authorized for your application')).toContain(
      'unauthorized_scope_error',
    );
  });
});
