import { NEWEST_LINKEDIN_VERSION } from '../config/linkedin-versions';
import { accountWarnings, isTokenWarning } from './account-warnings';

const now = new Date('2026-12-01T00:00:00Z');
const day = 86_400_000;
const ctx = { now, linkedInVersion: NEWEST_LINKEDIN_VERSION };
const at = (ms: number) => new Date(now.getTime() + ms).toISOString();

describe('accountWarnings', () => {
  it('is silent more than 7 days before expiry', () => {
    expect(accountWarnings('linkedin', { tokenExpiresAt: at(7 * day + 1), hasRefreshToken: false }, ctx)).toEqual([]);
  });
  it('warns from 7 days before a token that cannot be refreshed expires', () => {
    expect(accountWarnings('linkedin', { tokenExpiresAt: at(7 * day), hasRefreshToken: false }, ctx)).toEqual([
      `the access token expires on ${at(7 * day)} (in 7 days) and cannot be refreshed; reconnect the account before then`,
    ]);
  });
  it('says when the token has expired', () => {
    expect(accountWarnings('linkedin', { tokenExpiresAt: at(-1), hasRefreshToken: false }, ctx)[0]).toMatch(/^the access token expired on/);
  });
  it('is silent with a refresh token, or without a known expiry', () => {
    expect(accountWarnings('linkedin', { tokenExpiresAt: at(day), hasRefreshToken: true }, ctx)).toEqual([]);
    expect(accountWarnings('linkedin', { url: 'https://x' }, ctx)).toEqual([]);
  });

  it('warns on every LinkedIn account, and only there, when the configured API version is near or past its sunset', () => {
    const old = { now, linkedInVersion: '202601' }; // sunset 2027-01-15, 45 days after `now`
    const [warning] = accountWarnings('linkedin', {}, old);
    expect(warning).toMatch(/^LinkedIn API version 202601 is retired on 2027-01-15 \(in 45 days\): set LINKEDIN_VERSION to /);
    expect(isTokenWarning(warning)).toBe(false);
    expect(accountWarnings('bluesky', {}, old)).toEqual([]);
    expect(accountWarnings('webhook', {}, old)).toEqual([]);
    expect(accountWarnings('linkedin', {}, ctx)).toEqual([]);
  });
  it('lists a token warning first, then the version warning', () => {
    const both = accountWarnings('linkedin', { tokenExpiresAt: at(-1), hasRefreshToken: false }, { now, linkedInVersion: '202510' });
    expect(both.map(isTokenWarning)).toEqual([true, false]);
  });
});
