import fc from 'fast-check';
import { esc, excerpt, oneLine } from './mail-format';

describe('mail format', () => {
  it('escapes the five HTML-significant characters', () => {
    expect(esc(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });

  it('cuts an excerpt at whole user-perceived characters, with an ellipsis', () => {
    expect(excerpt('hello world', 5)).toBe('hello…');
    expect(excerpt('hello', 5)).toBe('hello');
    expect(excerpt('👩‍👩‍👧‍👦👍🏽abc', 2)).toBe('👩‍👩‍👧‍👦👍🏽…');
    expect(excerpt('line one\r\nline two', 100)).toBe('line one line two');
  });

  it('property: oneLine leaves no control character, line break or line separator', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (s) => {
        // eslint-disable-next-line no-control-regex -- control characters are what the property looks for
        expect(oneLine(s)).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
      }),
      { seed: 3 },
    );
  });

  it('property: escaped text never contains < > " \' or a bare &', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (s) => {
        const e = esc(s);
        expect(e).not.toMatch(/[<>"']/);
        expect(e).not.toMatch(/&(?!(amp|lt|gt|quot|#39);)/);
      }),
      { seed: 4 },
    );
  });
});
