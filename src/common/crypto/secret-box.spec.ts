import { randomBytes } from 'node:crypto';
import { SecretBox, SecretDecryptionError } from './secret-box';

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));

  it('round-trips a secret', () => {
    const sealed = box.encrypt('app-password-1234', 'account:a');
    expect(sealed).not.toContain('app-password');
    expect(box.decrypt(sealed, 'account:a')).toBe('app-password-1234');
  });

  it('round-trips JSON credentials with non-ASCII text', () => {
    const creds = { accessToken: 'tök€n', refreshToken: null };
    expect(box.decryptJson(box.encryptJson(creds))).toEqual(creds);
  });

  it('never produces the same ciphertext twice for the same secret', () => {
    expect(box.encrypt('same')).not.toBe(box.encrypt('same'));
  });

  it('refuses a tampered ciphertext', () => {
    const sealed = box.encrypt('secret-value');
    const parts = sealed.split('.');
    const ct = Buffer.from(parts[3], 'base64url');
    ct[0] = ct[0] ^ 0x01;
    parts[3] = ct.toString('base64url');
    expect(() => box.decrypt(parts.join('.'))).toThrow(SecretDecryptionError);
  });

  it('refuses a tampered tag or iv', () => {
    const parts = box.encrypt('secret-value').split('.');
    const badTag = [...parts];
    badTag[2] = Buffer.alloc(16).toString('base64url');
    expect(() => box.decrypt(badTag.join('.'))).toThrow(SecretDecryptionError);
    const badIv = [...parts];
    badIv[1] = Buffer.alloc(12).toString('base64url');
    expect(() => box.decrypt(badIv.join('.'))).toThrow(SecretDecryptionError);
  });

  it('refuses a ciphertext moved to another context', () => {
    const sealed = box.encrypt('secret-value', 'account:a');
    expect(() => box.decrypt(sealed, 'account:b')).toThrow(SecretDecryptionError);
  });

  it('refuses a ciphertext sealed with another key, without echoing it', () => {
    const other = new SecretBox(randomBytes(32));
    const sealed = other.encrypt('secret-value');
    let message = '';
    try {
      box.decrypt(sealed);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/could not be decrypted/);
    expect(message).not.toContain(sealed);
  });

  it('refuses malformed input', () => {
    for (const bad of ['', 'v1', 'v2.a.b.c', 'v1.!!.b.c', 'plain text']) {
      expect(() => box.decrypt(bad)).toThrow(SecretDecryptionError);
    }
  });
});
