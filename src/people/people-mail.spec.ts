import { firstPersonMail, invitationMail, resetMail } from './people-mail';

describe('mails of the team model', () => {
  it('escapes names in the HTML part and keeps the link as sent', () => {
    const link = 'https://herald.example.com/settings/invitation?token=abc';
    const mail = invitationMail({ workspaceName: '<script>x</script>', invitedBy: 'Eve "Owner"', role: 'editor', link, days: 7 });
    expect(mail.html).not.toContain('<script>x</script>');
    expect(mail.html).toContain('&lt;script&gt;');
    expect(mail.text).toContain(link);
    expect(mail.subject).not.toMatch(/[\r\n]/);
    expect(mail.text).toMatch(/editor/);
  });

  it('asks a first person to confirm their address, escaping the names and keeping the link as sent', () => {
    const link = 'https://herald.example.com/settings/invitation?token=abc';
    const mail = firstPersonMail({ workspaceName: 'Acme\r\nBcc: x', addedBy: 'key “CI” (hk_1)', name: '<b>Ada</b>', link, days: 7 });
    expect(mail.subject).toBe('Confirm your address for Acme Bcc: x on Herald');
    expect(mail.text).toContain(link);
    expect(mail.text).toMatch(/first person of the workspace "Acme Bcc: x" on Herald, as an owner/);
    expect(mail.text).toMatch(/does not become a Herald login/);
    expect(mail.html).toContain('&lt;b&gt;Ada&lt;/b&gt;');
  });

  it('says how long a reset link works and that it logs out elsewhere', () => {
    const mail = resetMail({ name: 'Ada\r\nBcc: x', link: 'https://h/settings/reset-password?token=t', minutes: 60 });
    expect(mail.text).toContain('60 minutes');
    expect(mail.text).toMatch(/logs you out everywhere else/);
    expect(mail.text).not.toContain('\r\nBcc');
  });
});
