import fc from 'fast-check';
import { unstorableText } from './validation';

describe('unstorableText', () => {
  it('names the path of a NUL character or an unpaired surrogate, keys included', () => {
    expect(unstorableText({ text: 'a\u0000b' })).toBe('text contains a NUL character (U+0000), which cannot be stored');
    expect(unstorableText({ targets: [{ text: 'ok' }, { text: 'x\uD800' }] })).toBe(
      'targets.1.text is not valid Unicode (it contains an unpaired surrogate)',
    );
    expect(unstorableText({ metadata: { 'k\u0000': 1 } })).toBe(
      'metadata.k\u0000 (the key) contains a NUL character (U+0000), which cannot be stored',
    );
    expect(unstorableText('\uDC00', 'q')).toBe('q is not valid Unicode (it contains an unpaired surrogate)');
  });

  it('lets every well-formed text without NUL through, emoji and all', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        fc.pre(!text.includes('\\u0000'));
        expect(unstorableText(JSON.parse(text))).toBeNull();
      }),
      { numRuns: 300 },
    );
    expect(unstorableText({ text: '👨‍👩‍👧‍👦 𝕳 e\u0301 \uFFFF' })).toBeNull();
  });

  it('finds any lone surrogate wherever it sits in a string', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 0xd800, max: 0xdfff }), fc.string(), (a, unit, b) => {
        const text = `${a.replace(/[\uD800-\uDFFF]/g, '')}${String.fromCharCode(unit)}${b.replace(/[\uD800-\uDFFF]/g, '')}`;
        expect(unstorableText({ t: text })).toMatch(/unpaired surrogate/);
      }),
    );
  });
});
