import fc from 'fast-check';
import {
  ALERTS_PER_ACCOUNT_PER_DAY,
  ALERTS_PER_WORKSPACE_PER_DAY,
  alertCapDecision,
  confirmationBudget,
  confirmationMail,
  CONFIRMATIONS_PER_DAY,
} from './mail-limits';

describe('alertCapDecision', () => {
  it('sends until the account or the workspace reached its limit', () => {
    expect(alertCapDecision({ account: 0, workspace: 0 })).toEqual({ send: true });
    expect(alertCapDecision({ account: ALERTS_PER_ACCOUNT_PER_DAY - 1, workspace: 0 })).toEqual({ send: true });
    expect(alertCapDecision({ account: ALERTS_PER_ACCOUNT_PER_DAY, workspace: 0 })).toEqual({ send: false, reached: 'account' });
    expect(alertCapDecision({ account: 0, workspace: ALERTS_PER_WORKSPACE_PER_DAY })).toEqual({ send: false, reached: 'workspace' });
  });

  it('property: the mails sent in a window never exceed either limit', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 200 }), (accountsOfEvents) => {
        const perAccount = new Map<number, number>();
        let workspace = 0;
        for (const a of accountsOfEvents) {
          const d = alertCapDecision({ account: perAccount.get(a) ?? 0, workspace });
          if (d.send) {
            perAccount.set(a, (perAccount.get(a) ?? 0) + 1);
            workspace++;
          }
        }
        expect(workspace).toBeLessThanOrEqual(ALERTS_PER_WORKSPACE_PER_DAY);
        for (const n of perAccount.values()) expect(n).toBeLessThanOrEqual(ALERTS_PER_ACCOUNT_PER_DAY);
      }),
      { seed: 18 },
    );
  });
});

describe('confirmationBudget', () => {
  it('is what is left of the day, never negative', () => {
    expect(confirmationBudget(0)).toBe(CONFIRMATIONS_PER_DAY);
    expect(confirmationBudget(CONFIRMATIONS_PER_DAY - 1)).toBe(1);
    expect(confirmationBudget(CONFIRMATIONS_PER_DAY + 5)).toBe(0);
  });
});

describe('confirmationMail', () => {
  it('names the workspace and the address, carries the link, and says that ignoring it is enough', () => {
    const m = confirmationMail({
      workspaceName: 'Acme <b>',
      address: 'ann@example.com',
      link: 'https://h.example/settings/confirm-recipient?token=T',
      days: 7,
    });
    expect(m.subject).toBe('Confirm Herald notifications for Acme <b>');
    expect(m.text).toContain('https://h.example/settings/confirm-recipient?token=T');
    expect(m.text).toContain('ignore this mail: you will get nothing more');
    expect(m.html).toContain('Acme &lt;b&gt;');
    expect(m.html).not.toContain('<b>');
  });
});
