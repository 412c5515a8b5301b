import fc from 'fast-check';
import { countableText, countStatus, linksIn, partIdempotencyKey, statusText, trimLinkEnd } from './mastodon-text';

const FAMILY = '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}\u200D\u{1F466}'; // one grapheme, 7 code points
const FLAG = '\u{1F1EB}\u{1F1F7}';

/** Text without anything the instance substitutes: no scheme separator, no `@`. */
const plain = fc.string({ unit: 'grapheme', maxLength: 80 }).filter((s) => !s.includes('://') && !s.includes('@'));
const host = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}\.[a-z]{2,6}$/);
const path = fc.stringMatching(/^(\/[A-Za-z0-9_~=-]{1,30}){0,4}$/);

describe('countStatus: the length as the instance counts it', () => {
  it.each([
    ['plain ASCII', 'hello world', 11],
    ['an emoji family as one character', `${FAMILY} family`, 8],
    ['a flag as one character', `${FLAG}!`, 2],
    ['a long link as 23', `read https://example.com/${'a'.repeat(200)}`, 5 + 23],
    ['a short link as 23 too', 'https://x.io', 23],
    ['two links', 'https://a.example/1 and http://b.example/2', 23 + 5 + 23],
    ['a link with a port and a query', 'see https://example.com:8443/p?q=1&r=2#top', 4 + 23],
    ['the sentence end outside the link', 'see https://example.com/a.', 4 + 23 + 1],
    ['a remote mention by its local part', 'hi @ada@example.social!', 3 + 4 + 1],
    ['a local mention as typed', 'hi @ada', 7],
    ['an e-mail address as typed (not a mention)', 'mail ada@example.social', 23],
    ['a link inside a word as typed', 'xhttps://example.com', 20],
    ['a bare domain as typed (no scheme: not a link)', 'example.com/path', 16],
    ['a link to a host without a dot as typed', 'http://localhost:3000/xyz', 25],
  ])('counts %s', (_name, text, expected) => {
    expect(countStatus(text)).toBe(expected);
  });

  it("counts the content warning with the text, and uses the instance's own length per link", () => {
    expect(countStatus('body', 'CW: spoilers')).toBe(4 + 12);
    expect(countStatus('go https://example.com/long/path', null, 30)).toBe(3 + 30);
    expect(countStatus('go https://example.com/long/path', null, 0)).toBe(3);
  });

  it('counts text without links or mentions as its grapheme clusters', () => {
    const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
    fc.assert(
      fc.property(plain, (text) => {
        expect(countStatus(text)).toBe([...segmenter.segment(text)].length);
      }),
    );
  });

  it('gives every link the same length, whatever its path', () => {
    fc.assert(
      fc.property(plain, host, path, path, (before, h, p1, p2) => {
        const a = countStatus(`${before} https://${h}${p1} end`);
        const b = countStatus(`${before} https://${h}${p2} end`);
        expect(a).toBe(b);
      }),
    );
  });

  it('adds exactly a space and the per-URL length for each link appended', () => {
    fc.assert(
      fc.property(plain, host, path, fc.integer({ min: 0, max: 60 }), (text, h, p, perUrl) => {
        expect(countStatus(`${text} https://${h}${p}`, null, perUrl)).toBe(countStatus(text, null, perUrl) + 1 + perUrl);
      }),
    );
  });

  it('counts a remote mention as the local one, whatever the server', () => {
    fc.assert(
      fc.property(plain, fc.stringMatching(/^[a-z0-9_]{1,20}$/), host, (text, name, server) => {
        expect(countStatus(`${text} @${name}@${server}`)).toBe(countStatus(`${text} @${name}`));
      }),
    );
  });

  it('counts a content warning as at most its own length more (a grapheme may join across the seam)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 30 }), plain, (cw, text) => {
        const joined = countStatus(text, cw);
        const apart = countStatus(cw) + countStatus(text);
        expect(joined).toBeLessThanOrEqual(apart);
        expect(joined).toBeGreaterThanOrEqual(apart - 1);
      }),
    );
  });

  it('never throws and never counts below zero', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.option(fc.string()), fc.integer({ min: 0, max: 100 }), (text, cw, perUrl) => {
        expect(countStatus(text, cw, perUrl)).toBeGreaterThanOrEqual(0);
      }),
    );
  });
});

describe('links', () => {
  it('finds each link without the punctuation that ends the sentence', () => {
    expect(linksIn('See https://example.com/a. And (https://example.com/b) or https://example.com/c_(d)!')).toEqual([
      'https://example.com/a',
      'https://example.com/b',
      'https://example.com/c_(d)',
    ]);
  });

  it('trims closing punctuation and unbalanced parentheses only', () => {
    expect(trimLinkEnd('https://e.com/x?!')).toBe('https://e.com/x');
    expect(trimLinkEnd('https://e.com/wiki/A_(b))')).toBe('https://e.com/wiki/A_(b)');
    expect(trimLinkEnd('https://e.com/a=b')).toBe('https://e.com/a=b');
  });

  it('keeps the text around a replaced link as it was', () => {
    expect(countableText('(see https://example.com/a).', 3)).toBe('(see xxx).');
  });
});

describe('statusText', () => {
  it('appends the link on a paragraph of its own unless the text holds it', () => {
    expect(statusText('New release', 'https://example.com/r')).toBe('New release\n\nhttps://example.com/r');
    expect(statusText('New release https://example.com/r today', 'https://example.com/r')).toBe('New release https://example.com/r today');
    expect(statusText('Text  \n', null)).toBe('Text  \n');
    expect(statusText('   ', 'https://example.com/r')).toBe('https://example.com/r');
  });
});

describe('partIdempotencyKey', () => {
  it("is the job's key for a single post and one key per part of a thread", () => {
    expect(partIdempotencyKey('job-1', 0, false)).toBe('job-1');
    expect(partIdempotencyKey('job-1', 0, true)).toBe('job-1/part-1');
    expect(partIdempotencyKey('job-1', 2, true)).toBe('job-1/part-3');
  });

  it('never gives two parts, or the parts of two jobs, the same key', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.uuid(), fc.integer({ min: 0, max: 25 }), fc.integer({ min: 0, max: 25 }), (a, b, i, j) => {
        fc.pre(a !== b || i !== j);
        expect(partIdempotencyKey(a, i, true)).not.toBe(partIdempotencyKey(b, j, true));
      }),
    );
  });
});
