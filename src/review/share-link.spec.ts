import fc from 'fast-check';
import { createHash } from 'node:crypto';
import {
  hashShareToken,
  linkPostIds,
  looksLikeShareToken,
  MAX_POSTS_PER_LINK,
  newShareToken,
  reviewUrl,
  shareLinkExpiry,
  shareLinkStatus,
} from './share-link';

const uuid = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

describe('review link tokens', () => {
  it('carries 256 random bits as 43 base64url characters, and only their SHA-256 is kept', () => {
    const token = newShareToken();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    expect(hashShareToken(token)).toEqual(createHash('sha256').update(token).digest());
    expect(newShareToken()).not.toBe(token);
  });

  it('encodes whatever 32 bytes the random source gives, and recognises every such token', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (bytes) => {
        const token = newShareToken(() => Buffer.from(bytes));
        expect(looksLikeShareToken(token)).toBe(true);
        expect(Buffer.from(token, 'base64url').equals(Buffer.from(bytes))).toBe(true);
      }),
    );
  });

  it('does not look up strings that cannot be a token', () => {
    for (const s of ['', 'short', 'A'.repeat(42), 'A'.repeat(44), `${'A'.repeat(42)}=`, `${'A'.repeat(42)}/`])
      expect(looksLikeShareToken(s)).toBe(false);
  });

  it('builds the page address under PUBLIC_URL', () => {
    expect(reviewUrl('https://herald.example.com/', 'tok')).toBe('https://herald.example.com/review/tok');
  });
});

describe('shareLinkStatus', () => {
  const now = new Date('2026-12-06T12:00:00Z');
  it('is active until the expiry instant, expired from it on, revoked whatever the time', () => {
    expect(shareLinkStatus({ expiresAt: shareLinkExpiry(now), revokedAt: null }, now)).toBe('active');
    expect(shareLinkStatus({ expiresAt: now, revokedAt: null }, now)).toBe('expired');
    expect(shareLinkStatus({ expiresAt: shareLinkExpiry(now), revokedAt: now }, now)).toBe('revoked');
    expect(shareLinkStatus({ expiresAt: new Date(now.getTime() - 1), revokedAt: now }, now)).toBe('revoked');
  });

  it('expires 7 days after it was made by default, or the days asked for', () => {
    expect(shareLinkExpiry(now).toISOString()).toBe('2026-12-13T12:00:00.000Z');
    expect(shareLinkExpiry(now, 30).toISOString()).toBe('2027-01-05T12:00:00.000Z');
  });

  it('opens a link only strictly before its expiry (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 40 * 86_400_000 }), fc.integer({ min: 1, max: 30 }), (offset, days) => {
        const at = new Date(now.getTime() + offset);
        const expiresAt = shareLinkExpiry(now, days);
        expect(shareLinkStatus({ expiresAt, revokedAt: null }, at) === 'active').toBe(at < expiresAt);
      }),
    );
  });
});

describe('linkPostIds', () => {
  it('puts the post of the path first, keeps the order given and drops repeats (any case)', () => {
    expect(linkPostIds(uuid(1), [uuid(2), uuid(1).toUpperCase(), uuid(3), uuid(2)])).toEqual({
      ok: true,
      ids: [uuid(1), uuid(2), uuid(3)],
    });
    expect(linkPostIds(uuid(1), undefined)).toEqual({ ok: true, ids: [uuid(1)] });
  });

  it(`refuses more than ${MAX_POSTS_PER_LINK} posts, naming postIds`, () => {
    const many = Array.from({ length: MAX_POSTS_PER_LINK }, (_, i) => uuid(i + 2));
    const refused = linkPostIds(uuid(1), many);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.message).toMatch(/^postIds: .*at most 20 posts.*21/);
    expect(linkPostIds(uuid(1), many.slice(1)).ok).toBe(true);
  });
});
