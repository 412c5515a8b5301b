import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new API key: "hk_" + 256 random bits, base64url. */
export function generateApiKey(): string {
  return `hk_${randomBytes(32).toString('base64url')}`;
}

/**
 * SHA-256 of the key. The generated keys carry 256 bits of entropy, so a slow password
 * hash would add latency to every request without adding safety; a bootstrap key chosen
 * by the operator must be at least 16 characters (config validation).
 */
export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** Constant-time comparison of two key hashes. */
export function sameKeyHash(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** What lists show to tell keys apart: a short head of the key, never enough to use it. */
export function keyPrefix(key: string): string {
  return key.startsWith('hk_') ? key.slice(0, 8) : key.slice(0, Math.min(4, Math.floor(key.length / 4)));
}

/** Reads `Authorization: Bearer <key>`; null when absent or malformed. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer[ ]+([^\s]+)\s*$/i.exec(header);
  return match ? match[1] : null;
}
