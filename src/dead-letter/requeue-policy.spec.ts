import type { AccountForRequeue } from '../account-state/account-state';
import { notDeadMessage, requeueTarget } from './requeue-policy';

const account = (over: Partial<AccountForRequeue> = {}): AccountForRequeue => ({
  id: '6d1f3c52-6d4c-4a55-8e3b-0d2b1c7e9a10',
  name: 'Blog',
  status: 'active',
  statusReason: null,
  deleted: false,
  ...over,
});

describe('requeueTarget', () => {
  it('queues the job of an active account, forced or not', () => {
    expect(requeueTarget(account(), false)).toEqual({ ok: true, status: 'scheduled' });
    expect(requeueTarget(account(), true)).toEqual({ ok: true, status: 'scheduled' });
  });

  it('refuses while the account needs re-auth, saying how to fix it and how to force', () => {
    const r = requeueTarget(account({ status: 'needs_reauth', statusReason: 'HTTP 401' }), false);
    expect(r).toMatchObject({ ok: false, reason: 'account_not_active' });
    expect(!r.ok && r.message).toBe(
      'account "Blog" needs re-authentication (HTTP 401): re-authenticate it first: PATCH /v1/accounts/6d1f3c52-6d4c-4a55-8e3b-0d2b1c7e9a10 ' +
        'with its new (or re-entered) credentials in "config"; or requeue with { "force": true } to let the job wait, paused, until the account is fixed',
    );
  });

  it('refuses while the account is disabled, pointing at enabling it', () => {
    const r = requeueTarget(account({ status: 'disabled' }), false);
    expect(!r.ok && r.message).toMatch(/is disabled: enable it first: PATCH .* \{ "status": "active" \}/);
  });

  it('forced, a job of an inactive account waits as paused', () => {
    expect(requeueTarget(account({ status: 'needs_reauth' }), true)).toEqual({ ok: true, status: 'paused' });
    expect(requeueTarget(account({ status: 'disabled' }), true)).toEqual({ ok: true, status: 'paused' });
  });

  it('never requeues to a deleted account, even forced', () => {
    expect(requeueTarget(account({ deleted: true }), true)).toMatchObject({ ok: false, reason: 'account_deleted' });
  });
});

describe('notDeadMessage', () => {
  it('says why each state cannot be requeued', () => {
    expect(notDeadMessage('scheduled')).toMatch(/already requeued or retried/);
    expect(notDeadMessage('succeeded')).toMatch(/publish it twice/);
    expect(notDeadMessage('discarded')).toMatch(/discarded/);
  });
});
