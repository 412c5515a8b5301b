import { JoseKey, NodeOAuthClient } from '@atproto/oauth-client-node';
import { generateKeyPairSync } from 'node:crypto';
import {
  CLIENT_METADATA_PATH,
  clientMetadata,
  ClientKeyError,
  generateClientKey,
  JWKS_PATH,
  keyIdFor,
  oauthAvailability,
  parseClientKey,
} from './bluesky-oauth-client';

const SCOPE = 'atproto repo:app.bsky.feed.post?action=create blob:image/*';
function memory<V>() {
  const m = new Map<string, V>();
  return {
    get: (k: string) => Promise.resolve(m.get(k)),
    set: (k: string, v: V) => Promise.resolve(void m.set(k, v)),
    del: (k: string) => Promise.resolve(void m.delete(k)),
  };
}

describe('Bluesky OAuth client (confidential parts)', () => {
  it('describes a confidential web client: private_key_jwt with ES256, DPoP-bound tokens, its keys at jwks_uri', () => {
    expect(clientMetadata('https://herald.example.com', SCOPE)).toEqual({
      client_id: `https://herald.example.com${CLIENT_METADATA_PATH}`,
      client_name: 'Herald',
      client_uri: 'https://herald.example.com',
      redirect_uris: ['https://herald.example.com/settings/bluesky/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      scope: SCOPE,
      application_type: 'web',
      token_endpoint_auth_method: 'private_key_jwt',
      token_endpoint_auth_signing_alg: 'ES256',
      dpop_bound_access_tokens: true,
      jwks_uri: `https://herald.example.com${JWKS_PATH}`,
    });
  });

  it('is accepted by @atproto/oauth-client-node with its key, which publishes only the public half', async () => {
    const key = await generateClientKey();
    const client = new NodeOAuthClient({
      clientMetadata: clientMetadata('https://herald.example.com/herald', SCOPE),
      keyset: [key],
      stateStore: memory(),
      sessionStore: memory(),
      requestLock: (_name, fn) => fn(),
    });
    expect(client.clientMetadata.client_id).toBe('https://herald.example.com/herald/oauth/bluesky/client-metadata.json');
    expect(client.clientMetadata.token_endpoint_auth_method).toBe('private_key_jwt');
    const published = client.jwks.keys;
    expect(published).toHaveLength(1);
    expect(published[0]).toMatchObject({ kty: 'EC', crv: 'P-256', kid: key.kid });
    expect(JSON.stringify(client.jwks)).not.toContain('"d"');
  });

  it('signs client assertions that the published key verifies', async () => {
    const key = await generateClientKey();
    const jwt = await key.createJwt(
      { alg: 'ES256', kid: key.kid },
      {
        iss: 'https://herald.example.com/oauth/bluesky/client-metadata.json',
        aud: 'https://pds.example',
        jti: 'j1',
        iat: Math.floor(Date.now() / 1000),
      },
    );
    const { d: _private, ...publicJwk } = key.privateJwk as Record<string, unknown>;
    const publicOnly = await JoseKey.fromJWK(publicJwk, key.kid);
    expect(publicOnly.isPrivate).toBe(false);
    const verified = await publicOnly.verifyJwt(jwt, { audience: 'https://pds.example' });
    expect(verified.payload.iss).toBe('https://herald.example.com/oauth/bluesky/client-metadata.json');
  });

  it.each([
    ['http://localhost:3000', /https address/],
    ['http://herald.example.com', /https address/],
    ['https://localhost:8443', /public https name/],
    ['https://203.0.113.7', /public https name/],
    ['https://herald.test', /public https name/],
    ['https://herald.local', /public https name/],
    ['https://herald', /public https name/],
  ])('refuses OAuth from PUBLIC_URL %s, saying why', (publicUrl, reason) => {
    const availability = oauthAvailability(publicUrl);
    expect(availability.ok).toBe(false);
    if (!availability.ok) expect(availability.reason).toMatch(reason);
  });

  it.each(['https://herald.example.com', 'https://posts.example.org:8443/herald'])('offers OAuth from PUBLIC_URL %s', (publicUrl) => {
    expect(oauthAvailability(publicUrl)).toEqual({ ok: true });
  });

  it('reads BLUESKY_OAUTH_PRIVATE_KEY as PKCS#8 PEM or JWK, with the same key id for the same key', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const jwk = privateKey.export({ format: 'jwk' });
    const fromPem = await parseClientKey(pem);
    const fromJwk = await parseClientKey(JSON.stringify(jwk));
    expect(fromPem.isPrivate).toBe(true);
    expect(fromPem.kid).toBe(keyIdFor(jwk));
    expect(fromJwk.kid).toBe(fromPem.kid);
    expect(await parseClientKey(JSON.stringify({ ...jwk, kid: 'mine' }))).toHaveProperty('kid', 'mine');
    // Another key, another id.
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    expect((await parseClientKey(other)).kid).not.toBe(fromPem.kid);
  });

  it('refuses a key that cannot sign ES256, without repeating it', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const publicJwk = JSON.stringify(ec.publicKey.export({ format: 'jwk' }));
    for (const value of [rsa, publicJwk, 'not a key at all', '{"kty":"EC"}']) {
      const err = await parseClientKey(value).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ClientKeyError);
      expect((err as Error).message).toMatch(/BLUESKY_OAUTH_PRIVATE_KEY/);
      expect((err as Error).message).not.toContain(value.slice(0, 40));
    }
  });
});
