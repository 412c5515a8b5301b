import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

export type MediaUrlCheck = 'ok' | 'expired' | 'invalid';

/**
 * Signed, expiring links to media (`GET /media/:id?exp=<epoch seconds>&sig=<HMAC>`), so a
 * webhook receiver can fetch an image without an API key and only for a while. The HMAC key
 * is derived from HERALD_SECRET_KEY with HKDF (a key of its own: a leaked URL signature says
 * nothing about the credentials key), so every process sharing the database signs alike.
 */
export class MediaUrlSigner {
  private readonly key: Buffer;

  constructor(
    secretKey: Buffer,
    private readonly publicUrl: string,
    private readonly ttlSeconds: number,
  ) {
    this.key = Buffer.from(hkdfSync('sha256', secretKey, Buffer.alloc(0), 'herald/media-url/v1', 32));
  }

  private sign(id: string, exp: number): string {
    return createHmac('sha256', this.key).update(`${id.toLowerCase()}.${exp}`).digest('base64url');
  }

  /** A link valid for the configured time from `now`. */
  url(id: string, now: Date): string {
    const exp = Math.floor(now.getTime() / 1000) + this.ttlSeconds;
    return `${this.publicUrl}/media/${id}?exp=${exp}&sig=${this.sign(id, exp)}`;
  }

  check(id: string, exp: string | undefined, sig: string | undefined, now: Date): MediaUrlCheck {
    if (exp === undefined || sig === undefined || !/^\d{1,12}$/.test(exp)) return 'invalid';
    const expected = Buffer.from(this.sign(id, Number(exp)));
    const given = Buffer.from(sig);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
    // Checked after the signature, so an expired answer never confirms a guessed id.
    return Number(exp) * 1000 < now.getTime() ? 'expired' : 'ok';
  }
}
