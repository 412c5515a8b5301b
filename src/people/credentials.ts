import { isEmail } from 'class-validator';

/**
 * The rules for people's addresses and passwords (pure), and the argon2id parameters.
 *
 * Passwords: at least 10 characters and at most 256, nothing else demanded (NIST SP 800-63B
 * §3.1.1.2: length, not composition rules), and not the person's own address.
 */
export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 256;

/**
 * argon2id with OWASP's first recommended setting (Password Storage Cheat Sheet: m=19 MiB,
 * t=2, p=1): ~100 ms per hash on one core of this 2-core machine. The parameters travel in each
 * stored hash (PHC string), so raising them later re-hashes each password at its next login.
 */
export const ARGON2_PARAMS = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/** A plain address, lower-cased: what Herald stores and compares. */
export function normalizeEmail(raw: string): string {
  return raw.trim().toLowerCase();
}

/**
 * Why an address cannot be a person's login, or null. Plain addresses only: no display name,
 * no quotes, backslashes, spaces or control characters (a login is typed, and mail is sent to it).
 */
export function emailProblem(email: string): string | null {
  if (email.length < 3 || email.length > 254) return 'an email address is 3 to 254 characters';
  if (!/^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/.test(email) || !isEmail(email)) {
    return 'that is not a plain email address (like ada@example.com)';
  }
  return null;
}

/** Why a password cannot be used, or null. */
export function passwordProblem(password: string, email: string): string | null {
  const length = [...password].length;
  if (length < PASSWORD_MIN) return `a password needs at least ${PASSWORD_MIN} characters`;
  if (length > PASSWORD_MAX) return `a password has at most ${PASSWORD_MAX} characters`;
  if (password.trim().toLowerCase() === email.toLowerCase()) return 'a password cannot be your email address';
  return null;
}

export function nameProblem(name: string): string | null {
  const n = name.trim();
  if (n.length === 0) return 'a name is needed';
  if (n.length > 200) return 'a name has at most 200 characters';
  // eslint-disable-next-line no-control-regex -- control characters are what this refuses
  if (/[\u0000-\u001f\u007f]/.test(n)) return 'a name cannot hold control characters';
  return null;
}
