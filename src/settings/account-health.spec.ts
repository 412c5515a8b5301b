import type { AccountView } from '../accounts/account.types';
import { accountHealth, AccountFailures, tokenExpiry } from './account-health';

const now = new Date('2026-12-01T14:00:00Z');
const noFailures: AccountFailures = { last: null, lastAuthAt: null };

function account(overrides: Partial<AccountView> = {}): AccountView {
  return {
    id: 'a1',
    provider: 'webhook',
    name: 'Blog',
    status: 'active',
    statusReason: null,
    config: {},
    circuit: { state: 'closed', openUntil: null, consecutiveFailures: 0 },
    retryPolicy: null,
    maxInFlight: 5,
    lastError: null,
    lastSuccessAt: null,
    createdAt: now.toISOString(),
    warnings: [],
    ...overrides,
  };
}

describe('accountHealth', () => {
  it('says active when nothing is wrong', () => {
    expect(accountHealth(account(), noFailures, now)).toMatchObject({ tone: 'ok', label: 'Active', detail: null });
  });

  it('says until when an open circuit closes, and how many attempts failed', () => {
    const h = accountHealth(
      account({ circuit: { state: 'open', openUntil: '2026-12-01T14:32:00Z', consecutiveFailures: 5 } }),
      noFailures,
      now,
    );
    expect(h).toMatchObject({ tone: 'warn', label: 'Circuit open', until: '2026-12-01T14:32:00Z' });
    expect(h.detail).toContain('5 failed attempts in a row');
  });

  it('calls an open circuit whose cooldown is over "recovering"', () => {
    const h = accountHealth(
      account({ circuit: { state: 'open', openUntil: '2026-12-01T13:59:00Z', consecutiveFailures: 5 } }),
      noFailures,
      now,
    );
    expect(h.label).toBe('Recovering');
    expect(
      accountHealth(
        account({ circuit: { state: 'half_open', openUntil: '2026-12-01T14:01:00Z', consecutiveFailures: 5 } }),
        noFailures,
        now,
      ).label,
    ).toBe('Recovering');
  });

  it('says since when the platform first refused the credentials, with the reason and what to do', () => {
    const h = accountHealth(
      account({ status: 'needs_reauth', statusReason: 'the platform refused the credentials: HTTP 401' }),
      { last: null, lastAuthAt: '2026-12-01T13:00:00Z' },
      now,
    );
    expect(h).toMatchObject({ tone: 'bad', label: 'Needs re-authentication', since: '2026-12-01T13:00:00Z' });
    expect(h.detail).toBe('the platform refused the credentials: HTTP 401. Its posts wait until it is reconnected.');
  });

  it('shows why an account was disabled', () => {
    const reason = 'disabled automatically after 50 consecutive failed attempts; enable it when the receiver works again';
    expect(accountHealth(account({ status: 'disabled', statusReason: reason }), noFailures, now)).toMatchObject({
      tone: 'bad',
      label: 'Disabled',
      detail: reason,
    });
  });

  it('warns about failures in a row on an active account with a closed circuit', () => {
    expect(
      accountHealth(account({ circuit: { state: 'closed', openUntil: null, consecutiveFailures: 1 } }), noFailures, now),
    ).toMatchObject({
      tone: 'warn',
      detail: '1 failed attempt in a row; Herald keeps retrying.',
    });
  });
});

describe('tokenExpiry', () => {
  const linkedin = (config: Record<string, unknown>) => account({ provider: 'linkedin', config });
  it('is absent for other platforms and unknown expiries', () => {
    expect(tokenExpiry(account({ config: { tokenExpiresAt: '2027-01-01T00:00:00Z' } }), now)).toBeNull();
    expect(tokenExpiry(linkedin({ tokenExpiresAt: null }), now)).toBeNull();
  });
  it('warns from 7 days before an expiry that cannot be refreshed', () => {
    expect(tokenExpiry(linkedin({ tokenExpiresAt: '2026-12-08T14:00:00Z', hasRefreshToken: false }), now)?.tone).toBe('warn');
    expect(tokenExpiry(linkedin({ tokenExpiresAt: '2026-12-08T14:00:01Z', hasRefreshToken: false }), now)?.tone).toBe('ok');
    expect(tokenExpiry(linkedin({ tokenExpiresAt: '2026-12-01T13:59:59Z', hasRefreshToken: false }), now)).toMatchObject({
      tone: 'bad',
      text: 'Access token expired on',
    });
  });
  it('does not warn when a refresh token renews it', () => {
    expect(tokenExpiry(linkedin({ tokenExpiresAt: '2026-12-02T00:00:00Z', hasRefreshToken: true }), now)?.tone).toBe('ok');
  });
});
