/** The fields of a nodemailer error that say what went wrong (all optional: anything may be thrown). */
export interface SmtpErrorLike {
  code?: unknown;
  responseCode?: unknown;
  rejectedErrors?: unknown;
  message?: unknown;
}

/**
 * Whether another try of a failed SMTP send may succeed (RFC 5321 §4.2.1):
 * - a 4yz reply is a transient negative completion ("try again later": greylisting, a full
 *   queue, a rate limit) → retry;
 * - a 5yz reply is permanent for this message or these recipients (unknown mailbox, message
 *   refused) → no retry, except when authentication failed (535, 530): that is Herald's
 *   configuration, which an operator fixes, not the message;
 * - no reply at all (connection refused or reset, DNS, TLS, timeout) → retry;
 * - all recipients refused: retry if any refusal was a 4yz.
 * Anything unrecognised is retried: the attempt budget bounds it, and giving up on a mail
 * because of an error Herald does not know is worse than one try too many.
 */
export function isRetryableSmtpError(err: SmtpErrorLike): boolean {
  if (err.code === 'EAUTH') return true;
  const rejected = Array.isArray(err.rejectedErrors) ? (err.rejectedErrors as SmtpErrorLike[]) : [];
  if (rejected.some((r) => replyClass(r.responseCode) === 4)) return true;
  const cls = replyClass(err.responseCode);
  if (cls === 4) return true;
  if (cls === 5) return false;
  return true;
}

function replyClass(code: unknown): number | null {
  return typeof code === 'number' && code >= 200 && code < 600 ? Math.floor(code / 100) : null;
}

/** One line for the outbox row and the log: the code and the server's words, never the connection URL. */
export function describeSmtpError(err: SmtpErrorLike): string {
  const message = typeof err.message === 'string' ? err.message : 'the send failed without a message';
  const code = typeof err.code === 'string' ? `${err.code}: ` : '';
  return `${code}${message}`.replace(/\s+/g, ' ').slice(0, 1000);
}
