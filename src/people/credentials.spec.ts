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

  it('refuses < and > in a name: labels such as "Name <email>" would be ambiguous', () => {
    for (const spoof of ['Ada <boss@example.com>', 'Ada > Grace', '<script>', 'Ada \uFF1Cboss@example.com\uFF1E', 'Ada \u2039boss\u203A']) {
      expect(nameProblem(spoof)).toBe(
        'a name cannot hold < or > (nor look-alikes such as ＜ ＞ ‹ ›): a label such as “Ada Lovelace <ada@example.com>” would be ambiguous',
      );
    }
  });

  it('refuses the characters that reorder how a label reads (bidi embeddings, overrides, isolates) and invisible separators', () => {
    // "Ada \u202E>moc.elpmaxe@ssob<" displays as "Ada <boss@example.com>".
    for (const c of [
      '\u202A',
      '\u202B',
      '\u202C',
      '\u202D',
      '\u202E',
      '\u2066',
      '\u2067',
      '\u2068',
      '\u2069',
      '\u200E',
      '\u200F',
      '\u061C',
    ]) {
      expect(nameProblem(`Ada ${c}Lovelace`)).toMatch(
        /^a name cannot hold U\+[0-9A-F]{4} \(.+\): it changes the order in which a label reads$/,
      );
    }
    expect(nameProblem('Ada\u2028Lovelace')).toMatch(/control/);
    expect(nameProblem('Ada\u0085Lovelace')).toMatch(/control/);
  });

  it('takes names from every script, with their own punctuation', () => {
    for (const ok of [
      "Zoë O'Neil-Smith",
      'José María',
      'محمد عبد الله',
      'יעל כהן',
      '李小龙',
      'Ada (she/her)',
      'Grace Hopper, Jr.',
      'Ōkubo 🎨',
    ]) {
      expect(nameProblem(ok)).toBeNull();
    }
  });
});
