import { describeSmtpError, isRetryableSmtpError } from './smtp-errors';

describe('SMTP errors', () => {
  it.each([
    [{ code: 'EMESSAGE', responseCode: 451, message: 'Message failed: 451 Try again later' }, true],
    [{ code: 'EENVELOPE', responseCode: 450, message: 'mailbox busy' }, true],
    [{ code: 'EMESSAGE', responseCode: 421, message: 'service not available' }, true],
    [{ code: 'EMESSAGE', responseCode: 554, message: 'Message rejected' }, false],
    [{ code: 'EENVELOPE', responseCode: 550, message: 'no such user' }, false],
    [
      {
        code: 'EENVELOPE',
        responseCode: 550,
        rejectedErrors: [{ responseCode: 550 }, { responseCode: 452 }],
        message: 'all recipients were rejected',
      },
      true,
    ],
    [{ code: 'EAUTH', responseCode: 535, message: 'Invalid login' }, true],
    [{ code: 'ECONNECTION', message: 'connect ECONNREFUSED 127.0.0.1:25' }, true],
    [{ code: 'ETIMEDOUT', message: 'Greeting never received' }, true],
    [{ code: 'ESOCKET', message: 'socket hang up' }, true],
    [{ message: 'something odd' }, true],
  ])('%j is retryable: %s', (err, retryable) => {
    expect(isRetryableSmtpError(err)).toBe(retryable);
  });

  it('describes an error on one bounded line', () => {
    expect(describeSmtpError({ code: 'EMESSAGE', message: 'Message failed:\r\n451 Try again' })).toBe(
      'EMESSAGE: Message failed: 451 Try again',
    );
    expect(describeSmtpError({ message: 'x'.repeat(5000) })).toHaveLength(1000);
  });
});
