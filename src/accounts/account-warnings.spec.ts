import { accountWarnings } from './account-warnings';

const now = new Date('2026-12-01T00:00:00Z');
const day = 86_400_000;
const at = (ms: number) => new Date(now.getTime() + ms).toISOString();

describe('accountWarnings', () => {
  it('is silent more than 7 days before expiry', () => {
    expect(accountWarnings({ tokenExpiresAt: at(7 * day + 1), hasRefreshToken: false }, now)).toEqual([]);
  });
  it('warns from 7 days before a token that cannot be refreshed expires', () => {
    expect(accountWarnings({ tokenExpiresAt: at(7 * day), hasRefreshToken: false }, now)).toEqual([
      `the access token expires on ${at(7 * day)} (in 7 days) and cannot be refreshed; reconnect the account before then`,
    ]);
  });
  it('says when the token has expired', () => {
    expect(accountWarnings({ tokenExpiresAt: at(-1), hasRefreshToken: false }, now)[0]).toMatch(/^the access token expired on/);
  });
  it('is silent with a refresh token, or without a known expiry', () => {
    expect(accountWarnings({ tokenExpiresAt: at(day), hasRefreshToken: true }, now)).toEqual([]);
    expect(accountWarnings({ url: 'https://x' }, now)).toEqual([]);
  });
});
