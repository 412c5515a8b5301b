import { AlertFacts, renderAlert } from './alert-builder';

const ctx = { publicUrl: 'https://herald.example.com', timeZone: 'America/New_York', workspaceName: 'Acme' };
const at = new Date('2027-05-05T12:00:00Z');

function facts(o: Partial<AlertFacts> = {}): AlertFacts {
  return {
    kind: 'needs_reauth',
    account: { id: 'acc-1', name: 'Blog', provider: 'webhook' },
    detail: 'the platform refused the credentials: HTTP 401',
    consecutiveFailures: 0,
    disableThreshold: null,
    tokenExpiresAt: null,
    at,
    waitingJobs: 0,
    ...o,
  };
}

describe('alert mails', () => {
  it('says an account needs to be reconnected, why, what to do, and how many posts wait', () => {
    const m = renderAlert(facts({ waitingJobs: 19 }), ctx);
    expect(m.subject).toBe('Herald: "Blog" (webhook) needs to be reconnected');
    expect(m.text).toContain(
      'The platform refused the credentials of "Blog" (webhook) at 2027-05-05 08:00 (America/New_York): the platform refused the credentials: HTTP 401',
    );
    expect(m.text).toContain('19 posts for it wait until then.');
    expect(m.text).toContain('Settings: https://herald.example.com/settings');
    expect(m.html).toContain('href="https://herald.example.com/settings/failed-posts?account=acc-1"');
  });

  it('says an account was disabled by the circuit breaker after N failures', () => {
    const m = renderAlert(facts({ kind: 'disabled', consecutiveFailures: 50, disableThreshold: 50, detail: 'HTTP 503' }), ctx);
    expect(m.subject).toBe('Herald: "Blog" (webhook) was disabled after 50 failed attempts in a row');
    expect(m.text).toContain('the last one with: HTTP 503');
  });

  it('warns early, naming the threshold at which the account will be disabled', () => {
    const m = renderAlert(
      facts({ kind: 'failure_warning', consecutiveFailures: 25, disableThreshold: 50, detail: 'connection refused' }),
      ctx,
    );
    expect(m.subject).toBe('Herald: "Blog" (webhook) has failed 25 times in a row');
    expect(m.text).toContain('At 50 failures in a row it disables the account');
  });

  it('warns about a LinkedIn token that cannot be refreshed, before and after it expired', () => {
    const soon = renderAlert(
      facts({
        kind: 'token_expiring',
        account: { id: 'l', name: 'Page', provider: 'linkedin' },
        tokenExpiresAt: new Date('2027-05-10T16:00:00Z'),
      }),
      ctx,
    );
    expect(soon.subject).toBe('Herald: the access token of "Page" (LinkedIn) expires on 2027-05-10 12:00');
    const past = renderAlert(
      facts({
        kind: 'token_expiring',
        account: { id: 'l', name: 'Page', provider: 'linkedin' },
        tokenExpiresAt: new Date('2027-05-01T00:00:00Z'),
      }),
      ctx,
    );
    expect(past.subject).toBe('Herald: the access token of "Page" (LinkedIn) has expired');
  });

  it('keeps the account name to one escaped line: no header injection, no markup', () => {
    const m = renderAlert(facts({ account: { id: 'x', name: 'Evil\r\nBcc: victim@example.com <b>bold</b>', provider: 'webhook' } }), ctx);
    expect(m.subject).not.toMatch(/[\r\n]/);
    expect(m.subject).toContain('Evil Bcc: victim@example.com <b>bold</b>');
    expect(m.html).not.toContain('<b>bold');
    expect(m.html).toContain('&lt;b&gt;bold&lt;/b&gt;');
  });
});
