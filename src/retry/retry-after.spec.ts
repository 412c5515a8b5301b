import fc from 'fast-check';
import {
  EPOCH_SECONDS_THRESHOLD,
  parseHttpDate,
  parseIsoDateTime,
  parseRateLimitReset,
  parseRetryAfter,
  serverRequestedDelayMs,
} from './retry-after';

const NOW = new Date(Date.UTC(2025, 5, 1, 0, 0, 0)); // 2025-06-01T00:00:00Z
const RFC_INSTANT = Date.UTC(1994, 10, 6, 8, 49, 37); // RFC 9110 §5.6.7 example

function parsedMs(value: string, now: Date = NOW): number | null {
  const d = parseHttpDate(value, now);
  return d === null ? null : d.getTime();
}

describe('parseHttpDate', () => {
  describe('RFC 9110 §5.6.7 examples', () => {
    it.each([
      ['IMF-fixdate', 'Sun, 06 Nov 1994 08:49:37 GMT'],
      ['RFC 850', 'Sunday, 06-Nov-94 08:49:37 GMT'],
      ['asctime', 'Sun Nov  6 08:49:37 1994'],
    ])('reads the %s example as 1994-11-06T08:49:37Z', (_format, value) => {
      expect(parsedMs(value)).toBe(RFC_INSTANT);
    });

    it('reads all three formats as the same instant', () => {
      const values = ['Sun, 06 Nov 1994 08:49:37 GMT', 'Sunday, 06-Nov-94 08:49:37 GMT', 'Sun Nov  6 08:49:37 1994'].map((v) =>
        parsedMs(v),
      );
      expect(new Set(values).size).toBe(1);
    });
  });

  describe('asctime', () => {
    it('accepts a zero-padded two-digit day', () => {
      expect(parsedMs('Sun Nov 06 08:49:37 1994')).toBe(RFC_INSTANT);
    });

    it('accepts a two-digit day', () => {
      expect(parsedMs('Wed Nov 16 08:49:37 1994')).toBe(Date.UTC(1994, 10, 16, 8, 49, 37));
    });

    it('reads the time as GMT although asctime has no zone', () => {
      expect(parseHttpDate('Thu Jan  1 00:00:00 1970', NOW)?.getTime()).toBe(0);
    });

    it.each([
      'Sun Nov 6 08:49:37 1994', // single digit without the padding space
      'Sun Nov   6 08:49:37 1994', // two padding spaces
      'Sun Nov  6 08:49:37 94', // two-digit year
      'Sun Nov  6 08:49:37 1994 GMT',
      'Sunday Nov  6 08:49:37 1994',
      'Sun, Nov  6 08:49:37 1994',
    ])('rejects the malformed asctime %p', (value) => {
      expect(parseHttpDate(value, NOW)).toBeNull();
    });
  });

  describe('case sensitivity (HTTP-date is case-sensitive)', () => {
    it.each([
      'sun, 06 Nov 1994 08:49:37 GMT',
      'Sun, 06 nov 1994 08:49:37 GMT',
      'Sun, 06 NOV 1994 08:49:37 GMT',
      'Sun, 06 Nov 1994 08:49:37 gmt',
      'SUN, 06 Nov 1994 08:49:37 GMT',
      'sunday, 06-Nov-94 08:49:37 GMT',
      'Sunday, 06-nov-94 08:49:37 GMT',
      'Sunday, 06-Nov-94 08:49:37 Gmt',
      'sun Nov  6 08:49:37 1994',
      'Sun nov  6 08:49:37 1994',
    ])('rejects %p', (value) => {
      expect(parseHttpDate(value, NOW)).toBeNull();
    });
  });

  describe('garbage', () => {
    it.each([
      '',
      ' ',
      'soon',
      '120',
      '1994-11-06T08:49:37Z',
      '1994-11-06',
      'Sun, 6 Nov 1994 08:49:37 GMT', // IMF day is 2DIGIT
      'Sun, 06 Nov 94 08:49:37 GMT', // IMF year is 4DIGIT
      'Sun, 06 Nov 1994 08:49:37 UTC',
      'Sun, 06 Nov 1994 08:49:37 +0000',
      'Sun, 06 Nov 1994 08:49:37',
      'Sun, 06 Nov 1994 08:49 GMT',
      'Sun, 06 Nov 1994 8:49:37 GMT',
      'Sun 06 Nov 1994 08:49:37 GMT',
      'Sun,  06 Nov 1994 08:49:37 GMT',
      'Sun, 06 Nov 1994  08:49:37 GMT',
      'Sunday, 06 Nov 1994 08:49:37 GMT', // long day name in IMF-fixdate
      'Sun, 06-Nov-94 08:49:37 GMT', // short day name in RFC 850
      'Sunday, 06-Nov-1994 08:49:37 GMT',
      'Sunday, 6-Nov-94 08:49:37 GMT',
      'Sun, 06 Nov 1994 08:49:37 GMT trailing',
      'Sun, 06 Nov 1994 08:49:37 GMTX',
      'Xyz, 06 Nov 1994 08:49:37 GMT',
      'Sun, 06 Foo 1994 08:49:37 GMT',
      'Sun, \u0660\u0666 Nov 1994 08:49:37 GMT', // Arabic-Indic digits are not DIGIT
      'Sun, 06 Nov 1994 08:49:37 GMT\u0000',
    ])('rejects %p', (value) => {
      expect(parseHttpDate(value, NOW)).toBeNull();
    });
  });

  describe('calendar validation', () => {
    it.each([
      'Thu, 30 Feb 2024 00:00:00 GMT',
      'Wed, 29 Feb 2023 00:00:00 GMT',
      'Thu, 29 Feb 1900 00:00:00 GMT', // a century that is not a leap year
      'Thu, 31 Apr 2025 00:00:00 GMT',
      'Thu, 32 Jan 2025 00:00:00 GMT',
      'Thu, 00 Jan 2025 00:00:00 GMT',
      'Thu, 01 Jan 2025 24:00:00 GMT',
      'Thu, 01 Jan 2025 25:00:00 GMT',
      'Thu, 01 Jan 2025 23:60:00 GMT',
      'Thu, 01 Jan 2025 23:59:61 GMT',
      'Thursday, 30-Feb-24 00:00:00 GMT',
      'Thu Feb 30 00:00:00 2024',
      'Thu Apr 31 00:00:00 2025',
      'Thu Jan  0 00:00:00 2025',
      'Thu Jan  1 99:00:00 2025',
    ])('rejects the impossible date %p', (value) => {
      expect(parseHttpDate(value, NOW)).toBeNull();
    });

    it.each([
      ['Thu, 29 Feb 2024 12:00:00 GMT', Date.UTC(2024, 1, 29, 12)],
      ['Tue, 29 Feb 2000 12:00:00 GMT', Date.UTC(2000, 1, 29, 12)],
      ['Thu, 31 Dec 2099 23:59:59 GMT', Date.UTC(2099, 11, 31, 23, 59, 59)],
      ['Thu Feb 29 12:00:00 2024', Date.UTC(2024, 1, 29, 12)],
    ])('accepts the real date %p', (value, expected) => {
      expect(parsedMs(value)).toBe(expected);
    });

    it('accepts a leap second (23:59:60) as the following second', () => {
      expect(parsedMs('Sat, 31 Dec 2016 23:59:60 GMT')).toBe(Date.UTC(2017, 0, 1, 0, 0, 0));
    });

    it('keeps four-digit years below 100 instead of shifting them to the 1900s', () => {
      expect(parseHttpDate('Mon, 01 Jan 0001 00:00:00 GMT', NOW)?.getUTCFullYear()).toBe(1);
      expect(parseHttpDate('Mon, 01 Jan 0094 00:00:00 GMT', NOW)?.getUTCFullYear()).toBe(94);
    });
  });

  it('does not cross-check the day name against the date', () => {
    // 1994-11-06 was a Sunday; the weekday is redundant and a wrong one is not worth ignoring a wait.
    expect(parsedMs('Mon, 06 Nov 1994 08:49:37 GMT')).toBe(RFC_INSTANT);
  });

  it('trims surrounding whitespace (field values exclude leading and trailing OWS)', () => {
    expect(parsedMs('  Sun, 06 Nov 1994 08:49:37 GMT\t')).toBe(RFC_INSTANT);
  });

  describe('RFC 850 two-digit years (RFC 9110 §5.6.7 50-year rule)', () => {
    it.each([
      // now = 2025-06-01T00:00:00Z, so "50 years in the future" ends at 2075-06-01T00:00:00Z.
      ['Sunday, 06-Nov-94 08:49:37 GMT', 1994],
      ['Sunday, 01-Jun-25 00:00:00 GMT', 2025],
      ['Sunday, 06-Nov-74 08:49:37 GMT', 2074],
      ['Sunday, 01-Jan-75 00:00:00 GMT', 2075], // 49 years 5 months ahead: taken as the future
      ['Sunday, 01-Jun-75 00:00:00 GMT', 2075], // exactly 50 years ahead is not "more than 50"
      ['Sunday, 01-Jun-75 00:00:01 GMT', 1975], // one second past 50 years: the most recent past 75
      ['Sunday, 06-Nov-75 08:49:37 GMT', 1975],
      ['Sunday, 06-Nov-76 08:49:37 GMT', 1976],
      ['Sunday, 06-Nov-99 08:49:37 GMT', 1999],
      ['Sunday, 06-Nov-00 08:49:37 GMT', 2000],
    ])('with now = 2025-06-01 reads %p in %i', (value, year) => {
      expect(parseHttpDate(value, NOW)?.getUTCFullYear()).toBe(year);
    });

    it('reads a year just past a century boundary as the next century when now is late in one', () => {
      const now = new Date(Date.UTC(2099, 5, 1));
      expect(parseHttpDate('Sunday, 06-Nov-01 08:49:37 GMT', now)?.getUTCFullYear()).toBe(2101);
      expect(parseHttpDate('Sunday, 06-Nov-50 08:49:37 GMT', now)?.getUTCFullYear()).toBe(2050);
      expect(parseHttpDate('Sunday, 06-Nov-98 08:49:37 GMT', now)?.getUTCFullYear()).toBe(2098);
    });

    it('places 00 around the turn of the millennium', () => {
      const now = new Date(Date.UTC(1999, 11, 31, 23, 59, 59));
      expect(parseHttpDate('Saturday, 01-Jan-00 00:00:00 GMT', now)?.getUTCFullYear()).toBe(2000);
      expect(parseHttpDate('Friday, 31-Dec-49 00:00:00 GMT', now)?.getUTCFullYear()).toBe(2049);
      expect(parseHttpDate('Saturday, 01-Jan-50 00:00:00 GMT', now)?.getUTCFullYear()).toBe(1950);
    });

    it('rejects Feb 29 of the chosen century when that year has none, rather than moving centuries', () => {
      expect(parsedMs('Tuesday, 29-Feb-00 00:00:00 GMT', NOW)).toBe(Date.UTC(2000, 1, 29));
      // With now = 2075, "00" means 2100, which is not a leap year.
      expect(parseHttpDate('Monday, 29-Feb-00 00:00:00 GMT', new Date(Date.UTC(2075, 0, 1)))).toBeNull();
    });

    it('always lands within 50 years either side of now', () => {
      fc.assert(
        fc.property(
          fc.integer({ min: Date.UTC(1900, 0, 1), max: Date.UTC(2900, 0, 1) }),
          fc.integer({ min: 0, max: 99 }),
          fc.integer({ min: 0, max: 11 }),
          fc.integer({ min: 1, max: 28 }),
          (nowMs, yy, month0, day) => {
            const now = new Date(nowMs);
            const month = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][month0];
            const value = `Monday, ${String(day).padStart(2, '0')}-${month}-${String(yy).padStart(2, '0')} 12:00:00 GMT`;
            const parsed = parseHttpDate(value, now);
            expect(parsed).not.toBeNull();
            const year = parsed!.getUTCFullYear();
            expect(year % 100).toBe(yy);
            const fiftyAhead = new Date(nowMs);
            fiftyAhead.setUTCFullYear(fiftyAhead.getUTCFullYear() + 50);
            const fiftyBehind = new Date(nowMs);
            fiftyBehind.setUTCFullYear(fiftyBehind.getUTCFullYear() - 50);
            expect(parsed!.getTime()).toBeLessThanOrEqual(fiftyAhead.getTime());
            expect(parsed!.getTime()).toBeGreaterThan(fiftyBehind.getTime());
          },
        ),
        { numRuns: 300 },
      );
    });
  });

  it('round-trips every IMF-fixdate that Date#toUTCString writes', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(9999, 11, 31, 23, 59, 59) }), (ms) => {
        const whole = Math.floor(ms / 1000) * 1000;
        expect(parsedMs(new Date(ms).toUTCString())).toBe(whole);
      }),
      { numRuns: 300 },
    );
  });

  it('never throws and returns a valid Date or null for arbitrary strings', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' })), (value) => {
        const parsed = parseHttpDate(value, NOW);
        if (parsed !== null) expect(Number.isFinite(parsed.getTime())).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

describe('parseRetryAfter', () => {
  it.each([
    ['120', 120_000],
    ['0', 0],
    ['1', 1_000],
    ['007', 7_000],
    ['  120  ', 120_000],
    ['\t5\r\n', 5_000],
    ['86400', 86_400_000],
  ])('reads delay-seconds %p as %i ms', (value, ms) => {
    expect(parseRetryAfter(value, NOW)).toBe(ms);
  });

  it.each([
    '1.5',
    '-3',
    '+3',
    '3s',
    '3 s',
    '1 2',
    '',
    '   ',
    '0x10',
    '1e3',
    'Infinity',
    'NaN',
    '5,5',
    '\u0661\u0662', // Arabic-Indic digits: not DIGIT
    '\uff11\uff12', // full-width digits
    'soon',
    'Sun, 30 Feb 2025 00:00:00 GMT',
  ])('ignores the invalid value %p', (value) => {
    expect(parseRetryAfter(value, NOW)).toBeNull();
  });

  it('ignores a missing header', () => {
    expect(parseRetryAfter(undefined, NOW)).toBeNull();
    expect(parseRetryAfter(null, NOW)).toBeNull();
  });

  it.each([
    '9'.repeat(17),
    '9'.repeat(400), // Number() would give Infinity
    '9007199254741', // × 1000 passes MAX_SAFE_INTEGER
    `000${'1'.repeat(30)}`,
  ])('saturates the huge delay %p at MAX_SAFE_INTEGER ms', (value) => {
    expect(parseRetryAfter(value, NOW)).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('keeps the largest delay that still fits exactly', () => {
    expect(parseRetryAfter('9007199254740', NOW)).toBe(9_007_199_254_740_000);
  });

  it('does not let leading zeros count as magnitude', () => {
    expect(parseRetryAfter(`${'0'.repeat(40)}12`, NOW)).toBe(12_000);
    expect(parseRetryAfter('0'.repeat(40), NOW)).toBe(0);
  });

  it.each([
    ['IMF-fixdate', 'Sun, 01 Jun 2025 00:02:00 GMT'],
    ['RFC 850', 'Sunday, 01-Jun-25 00:02:00 GMT'],
    ['asctime', 'Sun Jun  1 00:02:00 2025'],
  ])('honours an %s date in the future as the time until it', (_format, value) => {
    expect(parseRetryAfter(value, NOW)).toBe(120_000);
  });

  it('treats an HTTP-date in the past as no extra wait', () => {
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', NOW)).toBe(0);
    expect(parseRetryAfter('Sat, 31 May 2025 23:59:59 GMT', NOW)).toBe(0);
  });

  it('treats an HTTP-date equal to now as no extra wait', () => {
    expect(parseRetryAfter('Sun, 01 Jun 2025 00:00:00 GMT', NOW)).toBe(0);
  });

  it('measures an HTTP-date from a now with milliseconds', () => {
    const now = new Date(Date.UTC(2025, 5, 1, 0, 0, 0, 250));
    expect(parseRetryAfter('Sun, 01 Jun 2025 00:00:10 GMT', now)).toBe(9_750);
  });

  it('reads every integer number of seconds exactly', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 9_007_199_254_740 }), (seconds) => {
        expect(parseRetryAfter(String(seconds), NOW)).toBe(seconds * 1000);
      }),
    );
  });

  it('never throws on arbitrary strings and returns null or a safe non-negative integer', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string({ unit: 'binary' }),
          fc.stringMatching(/^\s*[0-9+\-.e]{0,30}\s*$/),
          fc.date({ noInvalidDate: true }).map((d) => d.toUTCString()),
        ),
        fc.date({ min: new Date(Date.UTC(1970, 0, 1)), max: new Date(Date.UTC(2200, 0, 1)), noInvalidDate: true }),
        (value, now) => {
          const ms = parseRetryAfter(value, now);
          if (ms !== null) {
            expect(Number.isSafeInteger(ms)).toBe(true);
            expect(ms).toBeGreaterThanOrEqual(0);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('parseRateLimitReset', () => {
  const blueskyNow = new Date(1_732_899_940_000);

  it('reads Bluesky epoch seconds as the time until that moment', () => {
    expect(parseRateLimitReset('1732900000', blueskyNow)).toBe(60_000);
  });

  it('treats an epoch reset in the past as no extra wait', () => {
    expect(parseRateLimitReset('1732899000', blueskyNow)).toBe(0);
  });

  it('reads small integers as IETF RateLimit delta seconds', () => {
    expect(parseRateLimitReset('30', NOW)).toBe(30_000);
    expect(parseRateLimitReset('0', NOW)).toBe(0);
    expect(parseRateLimitReset(' 45 ', NOW)).toBe(45_000);
  });

  it('switches from delta to epoch seconds at 1_000_000_000', () => {
    expect(EPOCH_SECONDS_THRESHOLD).toBe(1_000_000_000);
    expect(parseRateLimitReset('999999999', NOW)).toBe(999_999_999_000);
    // 1e9 epoch seconds is 2001-09-09, long before NOW.
    expect(parseRateLimitReset('1000000000', NOW)).toBe(0);
    expect(parseRateLimitReset('1000000000', new Date(999_999_990_000))).toBe(10_000);
  });

  it('saturates an epoch reset far in the future', () => {
    expect(parseRateLimitReset('9'.repeat(50), NOW)).toBe(Number.MAX_SAFE_INTEGER);
    expect(parseRateLimitReset('99999999999999', NOW)).toBe(Number.MAX_SAFE_INTEGER);
    // Still within the safe range: the exact distance.
    expect(parseRateLimitReset('9000000000000', NOW)).toBe(9_000_000_000_000_000 - NOW.getTime());
  });

  it('falls back to an HTTP-date', () => {
    expect(parseRateLimitReset('Sun, 01 Jun 2025 00:01:00 GMT', NOW)).toBe(60_000);
    expect(parseRateLimitReset('Sun, 06 Nov 1994 08:49:37 GMT', NOW)).toBe(0);
  });

  it("reads Mastodon's ISO 8601 reset moment (X-RateLimit-Reset: 2026-12-01T10:05:00.000Z) as the time until it", () => {
    expect(parseRateLimitReset('2025-06-01T00:05:00.000Z', NOW)).toBe(300_000);
    expect(parseRateLimitReset('2025-06-01T00:00:30Z', NOW)).toBe(30_000);
    expect(parseRateLimitReset('2025-06-01T02:00:00+02:00', NOW)).toBe(0);
    expect(parseRateLimitReset('2025-05-31T20:01:00-04:00', NOW)).toBe(60_000);
    expect(parseRateLimitReset('2025-05-31T23:59:00.000Z', NOW)).toBe(0);
  });

  it.each([
    '',
    ' ',
    '-5',
    '1.5',
    '+3',
    '1732900000.5',
    'soon',
    '1e9',
    '2025-06-01T00:05:00',
    '2025-06-01 00:05:00Z',
    '2025-13-01T00:00:00Z',
  ])('ignores %p', (value) => {
    expect(parseRateLimitReset(value, NOW)).toBeNull();
  });

  it('ignores a missing header', () => {
    expect(parseRateLimitReset(undefined, NOW)).toBeNull();
    expect(parseRateLimitReset(null, NOW)).toBeNull();
  });

  it('never throws on arbitrary strings and returns null or a safe non-negative integer', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.stringMatching(/^[0-9]{1,40}$/)), (value) => {
        const ms = parseRateLimitReset(value, NOW);
        if (ms !== null) {
          expect(Number.isSafeInteger(ms)).toBe(true);
          expect(ms).toBeGreaterThanOrEqual(0);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('parseIsoDateTime', () => {
  it('reads a date-time with Z or an offset, fractions to the millisecond', () => {
    expect(parseIsoDateTime('2026-12-01T10:05:00.123456Z')?.toISOString()).toBe('2026-12-01T10:05:00.123Z');
    expect(parseIsoDateTime('2026-12-01T10:05:00+01:30')?.toISOString()).toBe('2026-12-01T08:35:00.000Z');
    expect(parseIsoDateTime(' 2026-12-01T10:05:00Z ')?.toISOString()).toBe('2026-12-01T10:05:00.000Z');
  });

  it.each(['2026-12-01T10:05:00', '2026-02-30T00:00:00Z', '2026-12-01T24:00:00Z', '2026-12-01T10:05:00+24:00', '20261201T100500Z', 'x'])(
    'refuses %p (no zone, an impossible calendar value, another shape)',
    (value) => {
      expect(parseIsoDateTime(value)).toBeNull();
    },
  );

  it('agrees with toISOString for every instant it writes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 8_000_000_000_000 }), (ms) => {
        const d = new Date(ms);
        expect(parseIsoDateTime(d.toISOString())?.getTime()).toBe(ms);
      }),
      { numRuns: 300 },
    );
  });
});

describe('serverRequestedDelayMs', () => {
  it('reads header names case-insensitively', () => {
    expect(serverRequestedDelayMs({ 'Retry-After': '5' }, NOW)).toBe(5_000);
    expect(serverRequestedDelayMs({ 'RATELIMIT-RESET': '7' }, NOW)).toBe(7_000);
    expect(serverRequestedDelayMs({ 'X-RateLimit-Reset': '9' }, NOW)).toBe(9_000);
  });

  it('takes the longest of the waits the server asks for', () => {
    expect(serverRequestedDelayMs({ 'retry-after': '5', 'ratelimit-reset': '12', 'x-ratelimit-reset': '30' }, NOW)).toBe(30_000);
    expect(serverRequestedDelayMs({ 'retry-after': '50', 'x-ratelimit-reset': '30' }, NOW)).toBe(50_000);
  });

  it('reads a Mastodon 429 (X-RateLimit-Reset an ISO 8601 time, no Retry-After)', () => {
    expect(
      serverRequestedDelayMs(
        { 'x-ratelimit-limit': '300', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '2025-06-01T00:02:00.000Z' },
        NOW,
      ),
    ).toBe(120_000);
  });

  it('reads a Bluesky 429 (RateLimit-Reset in epoch seconds, no Retry-After)', () => {
    const now = new Date(1_732_899_940_000);
    expect(serverRequestedDelayMs({ 'ratelimit-reset': '1732900000', 'ratelimit-remaining': '0' }, now)).toBe(60_000);
  });

  it('skips unparseable values and uses the rest', () => {
    expect(serverRequestedDelayMs({ 'retry-after': 'soon', 'ratelimit-reset': '10' }, NOW)).toBe(10_000);
  });

  it('returns 0, not null, when a parseable wait is already over', () => {
    expect(serverRequestedDelayMs({ 'retry-after': 'Sun, 06 Nov 1994 08:49:37 GMT' }, NOW)).toBe(0);
  });

  it('returns null when no delay header is present or parseable', () => {
    expect(serverRequestedDelayMs({}, NOW)).toBeNull();
    expect(serverRequestedDelayMs({ 'content-type': 'application/json', date: 'Sun, 06 Nov 1994 08:49:37 GMT' }, NOW)).toBeNull();
    expect(serverRequestedDelayMs({ 'retry-after': undefined }, NOW)).toBeNull();
    expect(serverRequestedDelayMs({ 'retry-after': '1.5', 'x-ratelimit-reset': 'later' }, NOW)).toBeNull();
  });

  it('uses the first value of a repeated header', () => {
    expect(serverRequestedDelayMs({ 'retry-after': ['3', '100'] }, NOW)).toBe(3_000);
    expect(serverRequestedDelayMs({ 'retry-after': [] }, NOW)).toBeNull();
  });

  it('considers every spelling when a header object holds the same name twice', () => {
    expect(serverRequestedDelayMs({ 'Retry-After': '4', 'retry-after': '8' }, NOW)).toBe(8_000);
  });

  it('ignores similar but different header names', () => {
    expect(serverRequestedDelayMs({ 'retry-after-ms': '5', 'x-ratelimit-reset-after': '5', ratelimit: '5' }, NOW)).toBeNull();
  });
});
