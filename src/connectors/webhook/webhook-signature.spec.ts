import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { generateSigningSecret, isValidSigningSecret, SECRET_BYTES, signatureHeaders, signingKey, signWebhook } from './webhook-signature';

describe('signWebhook', () => {
  it('reproduces the Standard Webhooks test vector (from the Standard Webhooks specification)', () => {
    expect(signWebhook('whsec_dGVzdHNlY3JldA==', 'msg_123', 1700000000, '{}')).toBe('v1,rzWSNvryAlNWGy2Hk3pzTIxDc3okDWfaqB4dQ9FWTqE=');
  });

  it('produces the same headers for the test vector through signatureHeaders', () => {
    expect(signatureHeaders('whsec_dGVzdHNlY3JldA==', 'msg_123', new Date(1700000000_999), '{}')).toEqual({
      'webhook-id': 'msg_123',
      'webhook-timestamp': '1700000000',
      'webhook-signature': 'v1,rzWSNvryAlNWGy2Hk3pzTIxDc3okDWfaqB4dQ9FWTqE=',
    });
  });

  it('agrees byte for byte with the standardwebhooks reference library', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 64 }),
        fc.string({ minLength: 1, maxLength: 80 }),
        fc.integer({ min: 0, max: 4_102_444_800 }),
        fc.oneof(fc.string({ unit: 'binary' }), fc.json()),
        (keyBytes, msgId, seconds, body) => {
          const secret = `whsec_${Buffer.from(keyBytes).toString('base64')}`;
          const reference = new Webhook(secret).sign(msgId, new Date(seconds * 1000), body);
          expect(signWebhook(secret, msgId, seconds, body)).toBe(reference);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('signs so that the reference library verifies a fresh delivery', () => {
    const secret = generateSigningSecret();
    const body = JSON.stringify({ id: 'key-1', type: 'post.publish', data: { text: 'héllo 😀' } });
    const headers = signatureHeaders(secret, 'key-1', new Date(), body);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
  });

  it('refuses to sign with an invalid secret rather than sign with an empty key', () => {
    expect(() => signWebhook('whsec_', 'id', 1, '{}')).toThrow('invalid webhook signing secret');
  });
});

describe('signing secrets', () => {
  it('generates whsec_ + base64 of 32 random bytes', () => {
    const secret = generateSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(signingKey(secret)).toHaveLength(SECRET_BYTES);
    expect(generateSigningSecret()).not.toBe(secret);
  });

  it('uses the injected random source', () => {
    expect(generateSigningSecret((n) => Buffer.alloc(n, 1))).toBe(`whsec_${Buffer.alloc(32, 1).toString('base64')}`);
  });

  it('reads the key of a whsec_ secret, with or without the prefix', () => {
    expect(signingKey('whsec_dGVzdHNlY3JldA==')?.toString()).toBe('testsecret');
    expect(signingKey('dGVzdHNlY3JldA==')?.toString()).toBe('testsecret');
  });

  it.each(['', 'whsec_', 'whsec_!!!!', 'whsec_dGVzdHNlY3JldA', 'whsec_dGVz dHNl', 'whsec_dGVzdHNlY3JldA==='])('rejects %p', (secret) => {
    expect(signingKey(secret)).toBeNull();
    expect(isValidSigningSecret(secret)).toBe(false);
  });

  it.each([null, undefined, 42, {}, ['whsec_dGVzdHNlY3JldA==']])('rejects the non-string %p', (secret) => {
    expect(isValidSigningSecret(secret)).toBe(false);
  });
});
