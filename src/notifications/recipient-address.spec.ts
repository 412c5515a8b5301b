import fc from 'fast-check';
import { recipientProblem } from './recipient-address';

describe('recipientProblem', () => {
  it('accepts plain addresses', () => {
    for (const a of ['ann@example.com', 'Ann.Lee+alerts@mail.example.org', "o'brien@example.ie"]) expect(recipientProblem(a)).toBeNull();
  });

  it('refuses quoted local parts, backslashes and control characters (isEmail alone accepts the first ones)', () => {
    const invalid = 'is not a valid email address (name@example.com)';
    expect(recipientProblem('"a\u0001b"@example.com')).toBe(`${invalid}: it contains a control character or line break`);
    expect(recipientProblem('"ann"@example.com')).toBe(`${invalid}: quoted local parts are not accepted`);
    expect(recipientProblem('"x\\y"@example.com')).toBe(`${invalid}: quoted local parts are not accepted`);
    expect(recipientProblem('x\\y@example.com')).toBe(`${invalid}: it contains a backslash`);
    expect(recipientProblem('"a b"@example.com')).toBe(`${invalid}: quoted local parts are not accepted`);
    expect(recipientProblem('a@example.com\r\nBcc: b@example.com')).toBe(`${invalid}: it contains a control character or line break`);
    expect(recipientProblem('Bob <b@example.com>')).toBe(invalid);
    expect(recipientProblem('bob')).toBe(invalid);
  });

  it('property: an accepted address has no quote, backslash, white space or control character', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 12 }), fc.string({ unit: 'binary', maxLength: 12 }), (local, tail) => {
        const address = `${local}@example.com${tail}`;
        if (recipientProblem(address) === null) {
          // eslint-disable-next-line no-control-regex -- control characters are what the property looks for
          expect(address).not.toMatch(/["\\\s\u0000-\u001f\u007f-\u009f]/);
        }
      }),
      { seed: 18 },
    );
  });
});
