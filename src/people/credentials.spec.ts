import { emailProblem, nameProblem, normalizeEmail, passwordProblem } from './credentials';

describe('addresses, names and passwords of people', () => {
  it('takes plain addresses, lower-cased', () => {
    expect(normalizeEmail('  Ada.Lovelace@Example.COM ')).toBe('ada.lovelace@example.com');
    for (const ok of ['ada@example.com', 'a.b+tag@sub.example.org', "o'neil@example.ie"]) expect(emailProblem(ok)).toBeNull();
  });

  it('refuses display names, quotes, backslashes, spaces, control characters and bare hosts', () => {
    for (const bad of [
      'Ada <ada@example.com>',
      '"ada"@example.com',
      'a\\b@example.com',
      'a b@example.com',
      'ada@example.com\r\nBcc: x@y.z',
      'ada@localhost',
      'ada',
      '@example.com',
      'a@b',
    ]) {
      expect({ bad, problem: emailProblem(bad) }).toEqual({ bad, problem: expect.any(String) });
    }
  });

  it('wants 10 to 256 characters, not the address itself', () => {
    expect(passwordProblem('short', 'a@example.com')).toMatch(/at least 10/);
    expect(passwordProblem('ten chars!', 'a@example.com')).toBeNull();
    expect(passwordProblem('x'.repeat(257), 'a@example.com')).toMatch(/at most 256/);
    expect(passwordProblem('Ada@Example.com', 'ada@example.com')).toMatch(/email address/);
    // Characters, not UTF-16 units: ten emoji are ten characters.
    expect(passwordProblem('🔑'.repeat(10), 'a@example.com')).toBeNull();
  });

  it('wants a name without control characters', () => {
    expect(nameProblem('  ')).toMatch(/needed/);
    expect(nameProblem('Ada\nLovelace')).toMatch(/control/);
    expect(nameProblem('Ada Lovelace')).toBeNull();
  });
});
