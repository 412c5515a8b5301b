import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Encrypts credentials at rest with AES-256-GCM. Each value gets a fresh 96-bit IV; the
 * GCM tag makes any tampering (or the wrong key) fail loudly instead of decrypting garbage.
 * The optional context (e.g. "account:<id>") is bound as additional authenticated data, so
 * a ciphertext copied onto another row does not decrypt there.
 *
 * Stored form: `v1.<iv>.<tag>.<ciphertext>` (base64url parts), a plain text column.
 */
export class SecretDecryptionError extends Error {
  constructor() {
    // Never include the ciphertext or key material in the message.
    super('A stored secret could not be decrypted: it was altered, or HERALD_SECRET_KEY differs from the key it was encrypted with');
    this.name = 'SecretDecryptionError';
  }
}

const VERSION = 'v1';

export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key');
  }

  encrypt(plaintext: string, context = ''): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [VERSION, iv.toString('base64url'), tag.toString('base64url'), ciphertext.toString('base64url')].join('.');
  }

  decrypt(sealed: string, context = ''): string {
    const parts = sealed.split('.');
    if (parts.length !== 4 || parts[0] !== VERSION) throw new SecretDecryptionError();
    const [, ivText, tagText, ctText] = parts as [string, string, string, string];
    try {
      const iv = Buffer.from(ivText, 'base64url');
      const tag = Buffer.from(tagText, 'base64url');
      if (iv.length !== 12 || tag.length !== 16) throw new SecretDecryptionError();
      const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(Buffer.from(ctText, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretDecryptionError();
    }
  }

  encryptJson(value: unknown, context = ''): string {
    return this.encrypt(JSON.stringify(value), context);
  }

  decryptJson<T>(sealed: string, context = ''): T {
    return JSON.parse(this.decrypt(sealed, context)) as T;
  }
}
