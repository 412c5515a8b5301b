import { isEmail } from 'class-validator';

/**
 * Why a notification recipient is refused, or null when it is a plain address (pure).
 *
 * A recipient is a plain `name@domain`: no display name, no quoted local part, no backslash, no
 * control character, no white space. RFC 5321 allows quoted local parts (`"a b"@example.com`,
 * even with control characters inside the quotes) and class-validator's isEmail accepts them;
 * nobody needs one for a notification list, and each is a way to smuggle something odd into an
 * SMTP envelope or a mail header. isEmail then checks the rest (one @, a domain with a dot).
 */
const INVALID = 'is not a valid email address (name@example.com)';

export function recipientProblem(address: string): string | null {
  // eslint-disable-next-line no-control-regex -- control characters are what is refused
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(address)) return `${INVALID}: it contains a control character or line break`;
  if (address.includes('"')) return `${INVALID}: quoted local parts are not accepted`;
  if (address.includes('\\')) return `${INVALID}: it contains a backslash`;
  if (/\s/.test(address) || !isEmail(address)) return INVALID;
  return null;
}
