import fc from 'fast-check';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { limitsFor, measureFor, measureText } from '../../posts/platform-rules';

/**
 * The page's live counters (settings.js, in the browser) count as the server's rules do: the
 * counting functions of the script, run here against the server's (platform-rules.ts, and through
 * it connectors/mastodon/mastodon-text.ts) on the same texts.
 */
type Counting = {
  measure: (text: string, unit: string) => number;
  measureStatus: (text: string, link: string, spoiler: string, urlLength: number) => number;
};

function scriptCounting(): Counting {
  const source = fs.readFileSync(path.join(__dirname, 'settings.js'), 'utf8');
  const start = source.indexOf('  var segmenter');
  const end = source.indexOf('  // counting ends');
  if (start < 0 || end < start) throw new Error('settings.js: the counting functions were not found');
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the page's own script, read from the repository
  return new Function(`${source.slice(start, end)}; return { measure, measureStatus };`)() as Counting;
}

describe("the page's counters count as the server does", () => {
  const script = scriptCounting();
  const piece = fc.constantFrom(
    'a',
    ' ',
    '\n',
    'https://example.com/a/long/path',
    'http://a.example:8080/p?q=1.',
    '(https://example.com/x)',
    '@ada',
    '@ada@other.social',
    'mail@example.com',
    'e\u0301',
    '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}',
    '\u{1F1EB}\u{1F1F7}',
    '.',
    '!',
  );

  it('Mastodon: links as the instance length, the link field appended, remote mentions local, the content warning included', () => {
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 24 }),
        fc.constantFrom('', 'https://example.com/more'),
        fc.constantFrom('', 'CW: spoilers'),
        fc.constantFrom(0, 23, 40),
        (parts, link, cw, perUrl) => {
          const text = parts.join('');
          const limits = limitsFor('mastodon', {
            instanceUrl: 'https://social.example',
            limits: { maxCharacters: 500, charactersReservedPerUrl: perUrl },
          });
          expect(script.measureStatus(text, link, cw, perUrl)).toBe(measureFor(limits, text, link || null, cw || null));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('the other platforms: graphemes or code points', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 24 }), fc.constantFrom('graphemes' as const, 'characters' as const), (parts, unit) => {
        const text = parts.join('');
        expect(script.measure(text, unit)).toBe(measureText(text, unit));
      }),
    );
  });
});
