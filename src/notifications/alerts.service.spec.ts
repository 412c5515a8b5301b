import type { AccountHealthRow } from '../accounts/account.types';
import { stillRelevant } from './alerts.service';

const account = (o: Partial<AccountHealthRow> = {}): AccountHealthRow => ({
  id: 'a',
  workspaceId: 'w',
  name: 'Blog',
  provider: 'webhook',
  status: 'active',
  statusReason: null,
  config: {},
  circuitOpenedAt: null,
  consecutiveFailures: 0,
  lastError: null,
  deleted: false,
  ...o,
});
const event = (
  kind: 'needs_reauth' | 'disabled' | 'failure_warning' | 'token_expiring',
  o: { disableThreshold?: number; tokenExpiresAt?: Date } = {},
) => ({
  kind,
  disableThreshold: o.disableThreshold ?? null,
  tokenExpiresAt: o.tokenExpiresAt ?? null,
});

describe('whether an alert still has something to say', () => {
  it('drops an incident a person fixed before the notifier got to it', () => {
    expect(stillRelevant(event('needs_reauth'), account({ status: 'needs_reauth' }))).toBe(true);
    expect(stillRelevant(event('needs_reauth'), account({ status: 'active' }))).toBe(false);
    expect(stillRelevant(event('disabled'), account({ status: 'disabled' }))).toBe(true);
    expect(stillRelevant(event('disabled'), account({ status: 'active' }))).toBe(false);
    expect(stillRelevant(event('needs_reauth'), account({ status: 'needs_reauth', deleted: true }))).toBe(false);
    expect(stillRelevant(event('needs_reauth'), null)).toBe(false);
  });

  it('drops an early warning once a success reset the count, or once the account was stopped (its own alert says more)', () => {
    expect(stillRelevant(event('failure_warning', { disableThreshold: 50 }), account({ consecutiveFailures: 25 }))).toBe(true);
    expect(stillRelevant(event('failure_warning', { disableThreshold: 50 }), account({ consecutiveFailures: 0 }))).toBe(false);
    expect(stillRelevant(event('failure_warning', { disableThreshold: 5 }), account({ consecutiveFailures: 3 }))).toBe(true);
    expect(
      stillRelevant(event('failure_warning', { disableThreshold: 50 }), account({ status: 'disabled', consecutiveFailures: 50 })),
    ).toBe(false);
  });

  it('drops a token warning once the token was replaced or became refreshable', () => {
    const expires = new Date('2027-05-10T00:00:00.000Z');
    const config = { tokenExpiresAt: expires.toISOString(), hasRefreshToken: false };
    expect(stillRelevant(event('token_expiring', { tokenExpiresAt: expires }), account({ provider: 'linkedin', config }))).toBe(true);
    expect(
      stillRelevant(
        event('token_expiring', { tokenExpiresAt: expires }),
        account({ provider: 'linkedin', config: { ...config, tokenExpiresAt: '2027-07-01T00:00:00.000Z' } }),
      ),
    ).toBe(false);
    expect(
      stillRelevant(
        event('token_expiring', { tokenExpiresAt: expires }),
        account({ provider: 'linkedin', config: { ...config, hasRefreshToken: true } }),
      ),
    ).toBe(false);
  });
});
