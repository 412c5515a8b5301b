import { createHash, timingSafeEqual } from 'node:crypto';

/** Equal strings, compared in constant time (CSRF tokens). */
export function sameSecret(a: string, b: string): boolean {
  const x = createHash('sha256').update(a, 'utf8').digest();
  const y = createHash('sha256').update(b, 'utf8').digest();
  // Hashing first gives equal lengths, as timingSafeEqual needs, without leaking the length.
  return timingSafeEqual(x, y);
}
