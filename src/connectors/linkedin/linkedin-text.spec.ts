import fc from 'fast-check';
import { fromLittleText, toLittleText } from './linkedin-text';

describe('toLittleText', () => {
  it('escapes every reserved character of the little text format', () => {
    expect(toLittleText('\\ | { } @ [ ] ( ) < > * _ ~')).toBe('\\\\ \\| \\{ \\} \\@ \\[ \\] \\( \\) \\< \\> \\* \\_ \\~');
  });

  it('turns a #word into a LinkedIn hashtag, and escapes a # that is not one', () => {
    expect(toLittleText('#launch day, issue #42 and C# and a#b')).toBe(
      '{hashtag|\\#|launch} day, issue {hashtag|\\#|42} and C\\# and a\\#b',
    );
  });

  it('cannot form a mention by accident', () => {
    expect(toLittleText('@[Acme](urn:li:organization:123)')).toBe('\\@\\[Acme\\]\\(urn:li:organization:123\\)');
  });

  it('reads back as the original text, for any text', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme' }), (s) => expect(fromLittleText(toLittleText(s))).toBe(s)));
  });
});
