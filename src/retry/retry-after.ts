/**
 * Parsing of the waits a server asks for: `Retry-After` (RFC 9110 §10.2.3) and the
 * `RateLimit-Reset` / `X-RateLimit-Reset` family. Everything here is a pure function of the header
 * text and the caller's `now`; nothing reads the clock or the process time zone.
 */

const MONTHS: Readonly<Record<string, number>> = {
  Jan: 0,
  Feb: 1,
  Mar: 2,
  Apr: 3,
  May: 4,
  Jun: 5,
  Jul: 6,
  Aug: 7,
  Sep: 8,
  Oct: 9,
  Nov: 10,
  Dec: 11,
};

// The alternations below are spelled out, and the regexes have no `i` flag, because RFC 9110
// §5.6.7 says HTTP-date is case-sensitive (`%s"GMT"`, `%s"Nov"`): "nov" or "gmt" is not an
// HTTP-date. `\d` in a JavaScript regex without the `u` flag is exactly [0-9].
const DAY_NAME = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const DAY_NAME_L = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MONTH = '(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';

/** IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT` (the format senders MUST generate). */
const IMF_FIXDATE = new RegExp(`^${DAY_NAME}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
/** Obsolete RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT`, with a two-digit year. */
const RFC850_DATE = new RegExp(`^${DAY_NAME_L}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
/**
 * Obsolete asctime: `Sun Nov  6 08:49:37 1994`. date3 = month SP ( 2DIGIT / ( SP DIGIT ) ), so a
 * single-digit day is padded with a space; a zero-padded `06` is also 2DIGIT and allowed. It has
 * no zone designator but is GMT by definition.
 */
const ASCTIME_DATE = new RegExp(`^${DAY_NAME} ${MONTH} (\\d{2}| \\d) ${TIME} (\\d{4})$`);

const MS_PER_SECOND = 1000;

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysInMonth(year: number, month0: number): number {
  const days = [31, isLeapYear(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  return days[month0] ?? 0;
}

interface DateParts {
  year: number;
  month0: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/**
 * Epoch ms for GMT calendar parts, or null when they name no real instant (Feb 30, hour 24,
 * minute 60...). Validated by hand rather than by letting Date.UTC roll "Feb 30" over into March.
 * Second 60 is allowed: RFC 9110's time-of-day runs to 23:59:60 for a leap second, which POSIX time
 * (and so Date) represents as the following second.
 */
function utcInstant(p: DateParts): number | null {
  if (p.day < 1 || p.day > daysInMonth(p.year, p.month0)) return null;
  if (p.hour > 23 || p.minute > 59 || p.second > 60) return null;
  // UTC setters only, never local-time ones. Not a bare Date.UTC(year, ...): it maps years 0..99 to
  // 1900..1999. Date first, then time, so a leap second rolling into the next day (or year) is
  // carried from the right date.
  const d = new Date(0);
  d.setUTCFullYear(p.year, p.month0, p.day);
  d.setUTCHours(p.hour, p.minute, p.second, 0);
  const ms = d.getTime();
  return Number.isFinite(ms) ? ms : null;
}

/** `now` shifted by whole calendar years in UTC (Feb 29 rolls to Mar 1 in a common year). */
function addUtcYears(now: Date, years: number): number {
  const d = new Date(now.getTime());
  d.setUTCFullYear(d.getUTCFullYear() + years);
  return d.getTime();
}

/**
 * RFC 9110 §5.6.7: "Recipients of a timestamp value in rfc850-date format, which uses a two-digit
 * year, MUST interpret a timestamp that appears to be more than 50 years in the future as
 * representing the most recent year in the past that had the same last two digits."
 * We take the latest year ending in `yy` whose timestamp is not more than 50 years after `now`.
 * That keeps every answer within (now - 50y, now + 50y], so a year just past a century boundary
 * (now = 2099, yy = 01) reads as 2101 rather than 2001. The year is chosen first and the calendar
 * checked afterwards, so "29-Feb-00" in a century without Feb 29 is rejected, not moved to
 * another century.
 */
function rfc850Instant(yy: number, rest: Omit<DateParts, 'year'>, now: Date): number | null {
  const limit = addUtcYears(now, 50);
  // The candidate in the century after now's is always past the limit or the answer; the one two
  // centuries earlier is always in the past, so one of these three is chosen.
  let year = (Math.floor(now.getUTCFullYear() / 100) + 1) * 100 + yy;
  for (let i = 0; i < 2; i++) {
    // Only for the window comparison: Date.UTC rolls Feb 29 of a common year into Mar 1, which is
    // the same side of a 50-year limit to within a day.
    const approx = Date.UTC(year, rest.month0, rest.day, rest.hour, rest.minute, rest.second);
    if (approx <= limit) break;
    year -= 100;
  }
  return utcInstant({ ...rest, year });
}

/**
 * Parses an HTTP-date in any of the three formats RFC 9110 §5.6.7 requires recipients to accept.
 * Always GMT whatever the process time zone: `Date.parse` reads asctime (which has no zone) as
 * local time and accepts many non-HTTP shapes, so it is never used here. Returns null for
 * anything else, including impossible calendar values. The day name is not cross-checked against
 * the date: it is redundant, and a sender's wrong weekday is no reason to ignore its wait.
 * Surrounding whitespace is trimmed because field values exclude leading and trailing OWS
 * (RFC 9110 §5.5).
 */
export function parseHttpDate(value: string, now: Date): Date | null {
  if (typeof value !== 'string') return null;
  const text = value.trim();

  let m = IMF_FIXDATE.exec(text);
  if (m) {
    const ms = utcInstant({
      day: Number(m[1]),
      month0: MONTHS[m[2]],
      year: Number(m[3]),
      hour: Number(m[4]),
      minute: Number(m[5]),
      second: Number(m[6]),
    });
    return ms === null ? null : new Date(ms);
  }

  m = RFC850_DATE.exec(text);
  if (m) {
    const ms = rfc850Instant(
      Number(m[3]),
      {
        day: Number(m[1]),
        month0: MONTHS[m[2]],
        hour: Number(m[4]),
        minute: Number(m[5]),
        second: Number(m[6]),
      },
      now,
    );
    return ms === null ? null : new Date(ms);
  }

  m = ASCTIME_DATE.exec(text);
  if (m) {
    const ms = utcInstant({
      month0: MONTHS[m[1]],
      day: Number(m[2].trim()),
      year: Number(m[6]),
      hour: Number(m[3]),
      minute: Number(m[4]),
      second: Number(m[5]),
    });
    return ms === null ? null : new Date(ms);
  }

  return null;
}

const DIGITS = /^[0-9]+$/;

/**
 * A `1*DIGIT` string as a number, saturating at Number.MAX_SAFE_INTEGER instead of losing
 * precision or becoming Infinity (a 400-digit value would be Infinity with Number()).
 */
function saturatingDigits(digits: string): number {
  const significant = digits.replace(/^0+/, '');
  if (significant.length === 0) return 0;
  if (significant.length > 16) return Number.MAX_SAFE_INTEGER;
  return Math.min(Number(significant), Number.MAX_SAFE_INTEGER);
}

/** seconds × 1000, saturating at Number.MAX_SAFE_INTEGER ms. */
function secondsToMs(seconds: number): number {
  return Math.min(seconds * MS_PER_SECOND, Number.MAX_SAFE_INTEGER);
}

/** The wait until an absolute instant; a moment already past means no extra wait. */
function msUntil(targetMs: number, now: Date): number {
  const delta = targetMs - now.getTime();
  if (!Number.isFinite(delta)) return delta > 0 ? Number.MAX_SAFE_INTEGER : 0;
  return Math.min(Math.max(0, delta), Number.MAX_SAFE_INTEGER);
}

/**
 * `Retry-After = HTTP-date / delay-seconds` (RFC 9110 §10.2.3), as milliseconds to wait (≥ 0).
 * delay-seconds is `1*DIGIT` and nothing else: "1.5", "-3", "+3" and "3s" are not valid and are
 * ignored (null) rather than guessed at, as docs/delivery.md says of any unparseable value. An HTTP-date
 * in the past means no extra wait (0).
 */
export function parseRetryAfter(value: string | undefined | null, now: Date): number | null {
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (text.length === 0) return null;
  if (DIGITS.test(text)) return secondsToMs(saturatingDigits(text));
  const date = parseHttpDate(text, now);
  return date === null ? null : msUntil(date.getTime(), now);
}

/**
 * Below this a bare integer is a delta in seconds, at or above it an absolute epoch second.
 * 1e9 seconds is 2001-09-09 (and ~31.7 years as a delta): no real reset is that far away, and no
 * epoch timestamp a live server sends is that old.
 */
export const EPOCH_SECONDS_THRESHOLD = 1_000_000_000;

/**
 * An ISO 8601 date-time with a date, a time and an explicit zone, as Mastodon sends its
 * `X-RateLimit-Reset` (`2026-12-01T10:05:00.000Z`): `YYYY-MM-DDTHH:MM:SS`, optional fractional
 * seconds, then `Z` or `±HH:MM`. Nothing else: no week dates, no missing zone (a time without one
 * would be read in the process's zone), no `Date.parse` (it accepts far more than this).
 */
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|([+-])(\d{2}):(\d{2}))$/;

/** The instant of an ISO 8601 date-time with a zone (ISO_DATE_TIME), or null: calendar values checked as for HTTP-dates. */
export function parseIsoDateTime(value: string): Date | null {
  if (typeof value !== 'string') return null;
  const m = ISO_DATE_TIME.exec(value.trim());
  if (!m) return null;
  const ms = utcInstant({
    year: Number(m[1]),
    month0: Number(m[2]) - 1,
    day: Number(m[3]),
    hour: Number(m[4]),
    minute: Number(m[5]),
    second: Number(m[6]),
  });
  if (ms === null) return null;
  let offsetMs = 0;
  if (m[8] !== 'Z') {
    const hours = Number(m[10]);
    const minutes = Number(m[11]);
    if (hours > 23 || minutes > 59) return null;
    offsetMs = (m[9] === '-' ? -1 : 1) * (hours * 60 + minutes) * 60_000;
  }
  // Fractional seconds beyond milliseconds are dropped (a wait is never that precise).
  const fraction = m[7] === undefined ? 0 : Number(m[7].padEnd(3, '0').slice(0, 3));
  return new Date(ms + fraction - offsetMs);
}

/**
 * `RateLimit-Reset` / `X-RateLimit-Reset`, as milliseconds to wait. The same header name carries
 * three meanings in the wild: Bluesky (and GitHub) send the reset moment in epoch seconds
 * (e.g. 1732900000), the IETF RateLimit-headers draft sends delta seconds, and Mastodon sends the
 * reset moment as an ISO 8601 date-time (`2026-12-01T10:05:00.000Z`). A bare integer
 * ≥ EPOCH_SECONDS_THRESHOLD is read as epoch seconds (past → 0), a smaller one as delta seconds.
 * Anything else is tried as an HTTP-date, then as an ISO 8601 date-time with a zone (a moment
 * already past → 0); garbage is null.
 */
export function parseRateLimitReset(value: string | undefined | null, now: Date): number | null {
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (text.length === 0) return null;
  if (DIGITS.test(text)) {
    const n = saturatingDigits(text);
    if (n >= EPOCH_SECONDS_THRESHOLD) {
      // A reset beyond MAX_SAFE_INTEGER ms since the epoch (year 287396) is "forever": saturate
      // the wait itself, as for a huge delta, rather than subtracting now from a clamped instant.
      const resetMs = n * MS_PER_SECOND;
      if (resetMs >= Number.MAX_SAFE_INTEGER) return Number.MAX_SAFE_INTEGER;
      return msUntil(resetMs, now);
    }
    return secondsToMs(n);
  }
  const date = parseHttpDate(text, now) ?? parseIsoDateTime(text);
  return date === null ? null : msUntil(date.getTime(), now);
}

export type HeaderBag = Record<string, string | string[] | undefined>;

type DelayParser = (value: string | undefined | null, now: Date) => number | null;

/** Lower-cased header names we honour, each with its parser. */
const DELAY_HEADERS: ReadonlyMap<string, DelayParser> = new Map<string, DelayParser>([
  ['retry-after', parseRetryAfter],
  ['ratelimit-reset', parseRateLimitReset],
  ['x-ratelimit-reset', parseRateLimitReset],
]);

/**
 * The longest wait any of the server's delay headers asks for, in ms, or null when none of them
 * is present and parseable. Header names are compared case-insensitively (RFC 9110 §5.1), since
 * callers may hand us raw or normalised header objects. For a repeated header (an array) the first
 * value is used. The maximum is taken because honouring the shortest wait would just earn
 * another 429; the caller caps it with the policy's maxServerDelayMs.
 */
export function serverRequestedDelayMs(headers: HeaderBag, now: Date): number | null {
  let best: number | null = null;
  for (const [name, raw] of Object.entries(headers)) {
    const parse = DELAY_HEADERS.get(name.toLowerCase());
    if (parse === undefined) continue;
    const value = Array.isArray(raw) ? raw[0] : raw;
    const ms = parse(value, now);
    if (ms !== null && (best === null || ms > best)) best = ms;
  }
  return best;
}
