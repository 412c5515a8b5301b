import fc from 'fast-check';
import {
  assertValidForPlatform,
  countCodePoints,
  countGraphemes,
  limitsFor,
  MediaRuleInfo,
  PLATFORM_LIMITS,
  postedText,
  validateForPlatform,
  validateThreadForPlatform,
} from './platform-rules';

const image = (over: Partial<MediaRuleInfo> = {}): MediaRuleInfo => ({
  id: '00000000-0000-4000-8000-000000000001',
  alt: 'a cat on a keyboard',
  mimeType: 'image/png',
  width: 800,
  height: 600,
  ...over,
});

const FAMILY = '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}\u200D\u{1F466}'; // 👨‍👩‍👧‍👦: 7 code points, 11 UTF-16 units
const FLAG_FR = '\u{1F1EB}\u{1F1F7}'; // 🇫🇷: two regional indicators
const THUMB_DARK = '\u{1F44D}\u{1F3FF}'; // 👍🏿: emoji + skin-tone modifier
const E_ACUTE_COMBINING = 'e\u0301'; // é as e + U+0301
const ZALGO = 'a\u0300\u0301\u0302\u0303\u0304'; // one base, five combining marks
const RAINBOW_FLAG = '\u{1F3F3}\uFE0F\u200D\u{1F308}'; // 🏳️‍🌈: variation selector and ZWJ
const HANGUL_JAMO = '\u1100\u1161\u11A8'; // 각 as three conjoining jamo

describe('countGraphemes', () => {
  it.each([
    ['ASCII', 'hello', 5],
    ['a ZWJ family', FAMILY, 1],
    ['a flag (regional indicator pair)', FLAG_FR, 1],
    ['two flags side by side', FLAG_FR + FLAG_FR, 2],
    ['an emoji with a skin tone', THUMB_DARK, 1],
    ['a letter and a combining accent', E_ACUTE_COMBINING, 1],
    ['a letter with five combining marks', ZALGO, 1],
    ['a ZWJ flag with a variation selector', RAINBOW_FLAG, 1],
    ['conjoining Hangul jamo', HANGUL_JAMO, 1],
    ['CRLF', '\r\n', 1],
  ])('counts %s as people see it', (_name, text, expected) => {
    expect(countGraphemes(text)).toBe(expected);
  });

  it('never counts more graphemes than code points, nor code points than UTF-16 units', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        expect(countGraphemes(s)).toBeLessThanOrEqual(countCodePoints(s));
        expect(countCodePoints(s)).toBeLessThanOrEqual(s.length);
      }),
    );
  });
});

describe('validateForPlatform: Bluesky', () => {
  it('accepts exactly 300 graphemes made of 11-unit family emoji (3,300 UTF-16 units)', () => {
    // 300 families would be 7,500 bytes: use a mix that stays under 3,000 bytes.
    const text = FAMILY.repeat(100) + 'x'.repeat(200);
    expect(countGraphemes(text)).toBe(300);
    expect(text.length).toBe(1300);
    expect(Buffer.byteLength(text)).toBe(2700);
    expect(validateForPlatform('bluesky', { text, media: [] })).toEqual([]);
  });

  it('refuses 301 graphemes and says how many and the limit', () => {
    expect(validateForPlatform('bluesky', { text: 'x'.repeat(301), media: [] })).toEqual(['text is 301 graphemes, the limit is 300']);
  });

  it('counts flags, skin tones and combining marks as one each', () => {
    const text = (FLAG_FR + THUMB_DARK + E_ACUTE_COMBINING).repeat(100);
    expect(text.length).toBe(1000);
    expect(validateForPlatform('bluesky', { text, media: [] })).toEqual([]);
    expect(validateForPlatform('bluesky', { text: text + ZALGO, media: [] })).toEqual(['text is 301 graphemes, the limit is 300']);
  });

  it('refuses text over 3,000 UTF-8 bytes even under 300 graphemes', () => {
    const text = FAMILY.repeat(150); // 150 graphemes, 3,750 bytes
    expect(validateForPlatform('bluesky', { text, media: [] })).toEqual(['text is 3750 bytes in UTF-8, the limit is 3000']);
  });
});

describe('validateForPlatform: LinkedIn', () => {
  it('counts code points: 3,000 astral emoji (6,000 UTF-16 units) fit', () => {
    const text = '\u{1F600}'.repeat(3000);
    expect(validateForPlatform('linkedin', { text, media: [] })).toEqual([]);
    expect(validateForPlatform('linkedin', { text: text + 'a', media: [] })).toEqual(['text is 3001 characters, the limit is 3000']);
  });

  it("refuses an image over LinkedIn's 36,152,320 pixels", () => {
    const problems = validateForPlatform('linkedin', { text: 'hi', media: [image({ width: 7000, height: 6000 })] });
    expect(problems).toEqual([expect.stringMatching(/is 7000×6000 pixels, the limit is 36152320 pixels/)]);
  });
});

describe('validateForPlatform: every platform', () => {
  it.each([
    ['bluesky', 4],
    ['linkedin', 20],
    ['webhook', 4],
  ] as const)('%s: requires alt text on each image and takes at most %i images', (provider, limit) => {
    const images = (n: number) =>
      Array.from({ length: n }, (_, i) => image({ id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}` }));
    expect(validateForPlatform(provider, { text: 'hi', media: images(limit) })).toEqual([]);
    const media = images(limit + 1);
    media[1] = { ...media[1], alt: '  ' };
    const problems = validateForPlatform(provider, { text: 'hi', media });
    expect(problems).toContain(`${limit + 1} images attached, the limit is ${limit}`);
    expect(problems).toContainEqual(expect.stringMatching(/^media\.1 \(.*\) has no alt text/));
    expect(problems).toHaveLength(2);
  });

  it('webhook: the generic 10,000-character limit', () => {
    expect(validateForPlatform('webhook', { text: 'x'.repeat(10_000), media: [] })).toEqual([]);
    expect(validateForPlatform('webhook', { text: 'x'.repeat(10_001), media: [] })).toEqual([
      'text is 10001 characters, the limit is 10000',
    ]);
  });

  it('refuses empty text with nothing else to post on a social platform', () => {
    expect(validateForPlatform('bluesky', { text: ' ', media: [] })).toEqual([
      'text is empty and there is no image or link to post instead',
    ]);
    expect(validateForPlatform('linkedin', { text: '', media: [image()] })).toEqual([]);
    expect(validateForPlatform('linkedin', { text: '', media: [], link: 'https://example.com' })).toEqual([]);
  });
});

describe('assertValidForPlatform', () => {
  it('names the target, its platform and the limit', () => {
    expect(() => assertValidForPlatform('targets.1', 'bluesky', { text: 'x'.repeat(301), media: [] })).toThrow(
      'targets.1 (bluesky): text is 301 graphemes, the limit is 300',
    );
  });
});

describe('validateThreadForPlatform', () => {
  const part = (text: string, over: { media?: MediaRuleInfo[]; link?: string | null } = {}) => ({ text, media: [], link: null, ...over });

  it('checks every part of a Bluesky thread like the first, naming the part', () => {
    const problems = validateThreadForPlatform('bluesky', [
      part('fine'),
      part('x'.repeat(301)),
      part('an image without alt', { media: [image({ alt: ' ' })] }),
    ]);
    expect(problems).toEqual([
      'thread.1: text is 301 graphemes, the limit is 300',
      expect.stringMatching(/^thread\.2: media\.0 \(00000000-0000-4000-8000-000000000001\) has no alt text/),
    ]);
  });

  it('accepts parts within the limits on Bluesky and webhooks, and no thread anywhere', () => {
    expect(validateThreadForPlatform('bluesky', [part('one'), part('two', { link: 'https://example.com' })])).toEqual([]);
    expect(validateThreadForPlatform('webhook', [part('y'.repeat(10_000)), part('two')])).toEqual([]);
    expect(validateThreadForPlatform('linkedin', [])).toEqual([]);
  });

  it('refuses a thread for LinkedIn as a whole, saying what to do instead', () => {
    const problems = validateThreadForPlatform('linkedin', [part('one'), part('two')]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^thread: LinkedIn has no threads/);
    expect(problems[0]).toMatch(/Bluesky, Mastodon or a webhook/);
  });

  it('never reports a problem for a part that passes validateForPlatform on its own (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ minLength: 1, maxLength: 400 }), { minLength: 2, maxLength: 25 }), (texts) => {
        const parts = texts.map((t) => part(t));
        const expected = parts.flatMap((p, i) => validateForPlatform('bluesky', p).map((x) => `thread.${i}: ${x}`));
        expect(validateThreadForPlatform('bluesky', parts)).toEqual(expected);
      }),
    );
  });
});

describe('Mastodon: each instance its own limit', () => {
  const config = (maxCharacters: number | null) => ({
    instanceUrl: 'https://social.example',
    ...(maxCharacters === null ? {} : { limits: { maxCharacters, charactersReservedPerUrl: 23, maxMediaAttachments: 4 } }),
  });

  it("counts with the instance's own limit, every link as 23 and the content warning with the text", () => {
    const limits = limitsFor('mastodon', config(500));
    expect(validateForPlatform('mastodon', { text: 'a'.repeat(500), media: [] }, limits)).toEqual([]);
    expect(validateForPlatform('mastodon', { text: 'a'.repeat(501), media: [] }, limits)).toEqual([
      "text is 501 characters as the instance counts them (every link as 23), the limit is 500 (social.example's own limit)",
    ]);
    const link = `https://example.com/${'x'.repeat(300)}`;
    expect(validateForPlatform('mastodon', { text: `${'a'.repeat(476)} ${link}`, media: [] }, limits)).toEqual([]);
    // The post's link is appended to the status: it counts too (two line breaks and 23).
    expect(validateForPlatform('mastodon', { text: 'a'.repeat(476), media: [], link }, limits)).toEqual([
      "text is 501 characters as the instance counts them (every link as 23, the link included), the limit is 500 (social.example's own limit)",
    ]);
    expect(validateForPlatform('mastodon', { text: 'a'.repeat(495), media: [], spoilerText: 'spoil' }, limits)).toEqual([]);
    expect(validateForPlatform('mastodon', { text: 'a'.repeat(496), media: [], spoilerText: 'spoil' }, limits)[0]).toMatch(
      /^text is 501 characters .*the content warning included/,
    );
  });

  it('takes a larger instance limit, and says when the limit is only the usual one', () => {
    expect(validateForPlatform('mastodon', { text: 'a'.repeat(4000), media: [] }, limitsFor('mastodon', config(5000)))).toEqual([]);
    expect(validateForPlatform('mastodon', { text: 'a'.repeat(501), media: [] }, limitsFor('mastodon', config(null)))[0]).toMatch(
      /the limit is 500 \(Mastodon's usual limit: the instance's own is read when the account is checked\)/,
    );
  });

  it('publishes threads, each part checked against the same limit', () => {
    const limits = limitsFor('mastodon', config(100));
    expect(
      validateThreadForPlatform(
        'mastodon',
        [
          { text: 'ok', media: [] },
          { text: 'b'.repeat(101), media: [] },
        ],
        limits,
      ),
    ).toEqual([
      "thread.1: text is 101 characters as the instance counts them (every link as 23), the limit is 100 (social.example's own limit)",
    ]);
  });

  it('keeps the other platforms as they are', () => {
    expect(limitsFor('bluesky', config(5000))).toBe(PLATFORM_LIMITS.bluesky);
    expect(postedText('mastodon', 'Hi', 'https://example.com', 0)).toBe('Hi\n\nhttps://example.com');
  });
});
