import type { HeraldConfig } from '../config/config';
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

/**
 * < and > and the characters that read as them. A name is shown in labels such as
 * `Ada Lovelace <ada@example.com>` (the audit trail's actor, the team page, mail): a name that
 * holds `<boss@example.com>` would make one person's label read like another's.
 */
const ANGLE_BRACKETS = /[<>\uFF1C\uFF1E\uFE64\uFE65\u2039\u203A\u2329\u232A\u27E8\u27E9\u3008\u3009]/;

/**
 * Unicode's explicit direction formatting characters (UAX #9 §2: embeddings and overrides
 * U+202A–U+202E, isolates U+2066–U+2069) and its implicit marks (U+200E, U+200F, U+061C). They
 * are invisible and change the order in which the characters after them are shown: a name
 * `Ada \u202E>moc.elpmaxe@ssob<` is displayed as `Ada <boss@example.com>`. A name typed by a
 * person needs none of them; text in a right-to-left script reads right without them.
 */
const DIRECTION_MARKS: Record<string, string> = {
  '\u061C': 'Arabic letter mark',
  '\u200E': 'left-to-right mark',
  '\u200F': 'right-to-left mark',
  '\u202A': 'left-to-right embedding',
  '\u202B': 'right-to-left embedding',
  '\u202C': 'pop directional formatting',
  '\u202D': 'left-to-right override',
  '\u202E': 'right-to-left override',
  '\u2066': 'left-to-right isolate',
  '\u2067': 'right-to-left isolate',
  '\u2068': 'first strong isolate',
  '\u2069': 'pop directional isolate',
};
const DIRECTION_MARK = new RegExp(`[${Object.keys(DIRECTION_MARKS).join('')}]`);

/**
 * Why a person's name cannot be used, or null. A name is shown wherever the person is (labels,
 * mail, the audit trail), so besides its length it cannot hold what would change how a label
 * reads: control characters (C0, DEL, C1, the line and paragraph separators), < and > (and
 * their look-alikes), and direction formatting characters.
 */
export function nameProblem(name: string): string | null {
  const n = name.trim();
  if (n.length === 0) return 'a name is needed';
  if (n.length > 200) return 'a name has at most 200 characters';
  // eslint-disable-next-line no-control-regex -- control characters are what this refuses
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(n)) return 'a name cannot hold control characters';
  if (ANGLE_BRACKETS.test(n)) {
    return 'a name cannot hold < or > (nor look-alikes such as ＜ ＞ ‹ ›): a label such as “Ada Lovelace <ada@example.com>” would be ambiguous';
  }
  const mark = DIRECTION_MARK.exec(n)?.[0];
  if (mark !== undefined) {
    const code = mark.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
    return `a name cannot hold U+${code} (${DIRECTION_MARKS[mark]}): it changes the order in which a label reads`;
  }
  return null;
}

/** Mail reaches people only through an SMTP server; without one, links are handed over by hand. */
export function mailsLinks(config: Pick<HeraldConfig, 'smtpUrl'>): boolean {
  return config.smtpUrl !== null;
}
