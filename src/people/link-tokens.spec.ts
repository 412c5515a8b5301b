import fc from 'fast-check';
import {
  expiryFrom,
  hashLinkToken,
  INVITATION_TTL_MS,
  linkStatus,
  looksLikeLinkToken,
  newLinkToken,
  RESET_MAIL_EVERY_MS,
  RESET_TTL_MS,
  resetMailAllowed,
} from './link-tokens';

const t0 = new Date('2026-12-01T09:00:00Z');
const at = (ms: number) => new Date(t0.getTime() + ms);

describe('one-use links', () => {
  it('an invitation works for 7 days, a reset for 1 hour, up to (not at) the expiry instant', () => {
    const invitation = { expiresAt: expiryFrom(t0, INVITATION_TTL_MS), usedAt: null, revokedAt: null };
    expect(linkStatus(invitation, at(7 * 86_400_000 - 1))).toBe('usable');
    expect(linkStatus(invitation, at(7 * 86_400_000))).toBe('expired');
    const reset = { expiresAt: expiryFrom(t0, RESET_TTL_MS), usedAt: null, revokedAt: null };
    expect(linkStatus(reset, at(3_599_999))).toBe('usable');
    expect(linkStatus(reset, at(3_600_000))).toBe('expired');
  });

  it('a used link stays used and a withdrawn one withdrawn, whatever the time', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e12, max: 1e12 }), (ms) => {
        const used = linkStatus({ expiresAt: at(1000), usedAt: t0, revokedAt: null }, at(ms));
        const revoked = linkStatus({ expiresAt: at(1000), usedAt: null, revokedAt: t0 }, at(ms));
        return used === 'used' && revoked === 'revoked';
      }),
    );
  });

  it('sends at most one reset mail per 5 minutes', () => {
    expect(resetMailAllowed(null, t0)).toBe(true);
    expect(resetMailAllowed(t0, at(RESET_MAIL_EVERY_MS - 1))).toBe(false);
    expect(resetMailAllowed(t0, at(RESET_MAIL_EVERY_MS))).toBe(true);
  });

  it('makes 256-bit tokens that look like ours, and hashes them to 32 bytes', () => {
    const a = newLinkToken();
    expect(looksLikeLinkToken(a)).toBe(true);
    expect(a).not.toBe(newLinkToken());
    expect(hashLinkToken(a)).toHaveLength(32);
    expect(looksLikeLinkToken(`${a}x`)).toBe(false);
    expect(looksLikeLinkToken('')).toBe(false);
    expect(looksLikeLinkToken(a.replace(/.$/, '%'))).toBe(false);
  });
});
