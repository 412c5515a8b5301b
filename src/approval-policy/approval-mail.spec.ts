import { decisionMail, waitingMail } from './approval-mail';

describe('approval mails', () => {
  it('asks the owners to decide on the page, escaping what people typed', () => {
    const mail = waitingMail({
      workspaceName: 'Acme',
      author: 'Eve <eve@example.com>',
      text: '<b>Launch</b>\nday',
      resubmitted: false,
      publicUrl: 'https://h.example',
    });
    expect(mail.subject).toBe('A post waits for your approval in Acme');
    expect(mail.text).toContain('Eve <eve@example.com> asks for approval of a post:');
    expect(mail.text).toContain('“<b>Launch</b> day”');
    expect(mail.text).toContain('https://h.example/settings/approvals');
    expect(mail.html).toContain('&lt;b&gt;Launch&lt;/b&gt;');
    expect(mail.html).not.toContain('<b>Launch');
    expect(
      waitingMail({ workspaceName: 'Acme', author: 'Eve', text: 'x', resubmitted: true, publicUrl: 'https://h.example' }).text,
    ).toMatch(/edited a post that was approved/);
  });

  it('tells the author the decision, with the comment of a rejection', () => {
    const rejected = decisionMail({
      workspaceName: 'Acme',
      decision: 'rejected',
      by: 'Olga',
      text: 'Post',
      comment: 'Fix the date',
      publicUrl: 'https://h.example',
    });
    expect(rejected.subject).toBe('Your post was sent back in Acme');
    expect(rejected.text).toContain('Comment: Fix the date');
    const expired = decisionMail({
      workspaceName: 'Acme',
      decision: 'expired',
      by: 'Olga',
      text: 'Post',
      comment: null,
      publicUrl: 'https://h.example',
    });
    expect(expired.text).toMatch(/after its deadline had passed: it expired, nothing was published/);
    expect(expired.text).not.toContain('Comment:');
  });
});
