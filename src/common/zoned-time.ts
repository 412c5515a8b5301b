/**
 * Wall-clock times in a time zone and the instants Herald stores, both ways: the one time-zone
 * helper (the page's composer and calendar, the digest's schedule, the mails' times). Pure:
 * every function takes the instant it works on, and the zone rules come from the runtime's ICU
 * data through Intl (no table of our own).
 *
 * The composer takes a date and a time "in your time zone" (an IANA name: the browser's own,
 * from Intl, or the one chosen on the page) and stores the instant; the calendar lays instants
 * out on the days of that zone.
 *
 * The digest schedule compares wall-clock values only (local date, hour, minute: `localTime`)
 * and never converts a local time back to an instant, so the days around a daylight-saving
 * change need no special case: a day's 08:00 is reached once whether the day lasts 23, 24 or 25
 * hours, and an hour that does not exist (02:30 on a spring-forward night) is simply passed.
 */

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(zone, f);
  }
  return f;
}

/**
 * True when `zone` is an IANA zone name the runtime knows ("Europe/Paris", "UTC"): the
 * composer's zone, a workspace's digest zone.
 */
export function isTimeZone(zone: unknown): zone is string {
  // Names only: Intl also takes offsets such as "+01:00" (in newer runtimes), which have no
  // daylight-saving rules and would silently drift by an hour twice a year for a person who
  // meant a place. A name starts with a letter and has at most three parts.
  if (typeof zone !== 'string' || zone.length > 64 || !/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+){0,2}$/.test(zone)) return false;
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}

/** Every zone the runtime lists, UTC first: the page's choice of zones. */
export function timeZones(): string[] {
  const listed = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return ['UTC', ...listed.filter((z) => z !== 'UTC')];
}

export interface WallTime {
  /** YYYY-MM-DD */
  date: string;
  /** HH:MM */
  time: string;
}

interface Parts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function partsAt(instant: number, zone: string): Parts {
  const out: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(new Date(instant))) {
    if (p.type !== 'literal') out[p.type] = Number(p.value);
  }
  return { year: out.year, month: out.month, day: out.day, hour: out.hour % 24, minute: out.minute, second: out.second };
}

/** The zone's offset from UTC at `instant`, in milliseconds (east positive). */
export function offsetAt(instant: number, zone: string): number {
  const p = partsAt(instant, zone);
  const wall = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return wall - Math.floor(instant / 1000) * 1000;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** "+05:30", "-03:00", "+00:00". */
export function offsetLabel(offsetMs: number): string {
  const sign = offsetMs < 0 ? '-' : '+';
  const minutes = Math.round(Math.abs(offsetMs) / 60_000);
  return `${sign}${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`;
}

/** The wall-clock date and time of `instant` in `zone`. */
export function wallTimeOf(instant: Date, zone: string): WallTime {
  const p = partsAt(instant.getTime(), zone);
  return { date: `${pad(p.year, 4)}-${pad(p.month)}-${pad(p.day)}`, time: `${pad(p.hour)}:${pad(p.minute)}` };
}

/** A wall-clock value as the digest schedule compares them. */
export interface LocalTime {
  /** YYYY-MM-DD */
  date: string;
  hour: number;
  minute: number;
}

/** The wall-clock date, hour and minute of `instant` in `zone`. */
export function localTime(instant: Date, zone: string): LocalTime {
  const p = partsAt(instant.getTime(), zone);
  return { date: `${pad(p.year, 4)}-${pad(p.month)}-${pad(p.day)}`, hour: p.hour, minute: p.minute };
}

/** `2026-12-01 08:05`, in the zone: how the mails show times. */
export function formatLocal(instant: Date, zone: string): string {
  const w = wallTimeOf(instant, zone);
  return `${w.date} ${w.time}`;
}

/** Orders wall-clock values (date, then hour, then minute). */
export function compareLocal(a: LocalTime, b: LocalTime): number {
  if (a.date !== b.date) return a.date < b.date ? -1 : 1;
  if (a.hour !== b.hour) return a.hour - b.hour;
  return a.minute - b.minute;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^(\d{2}):(\d{2})$/;

/** A YYYY-MM-DD that is a real day, as [year, month, day]; null otherwise. */
export function parseDate(date: string): [number, number, number] | null {
  const m = DATE.exec(date);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > new Date(Date.UTC(y, mo, 0)).getUTCDate()) return null;
  return [y, mo, d];
}

export type ZonedResult = { ok: true; instant: Date } | { ok: false; problem: string };

/**
 * The instant a person means by `date` `time` in `zone`. A time the clocks skip (spring
 * forward) does not exist and is refused with a sentence saying so; a time that happens twice
 * (fall back) is its first occurrence, as calendars do.
 */
export function zonedToInstant(date: string, time: string, zone: string): ZonedResult {
  const d = parseDate(date);
  if (!d) return { ok: false, problem: `${date || 'the date'} is not a date (YYYY-MM-DD)` };
  const t = TIME.exec(time);
  if (!t || Number(t[1]) > 23 || Number(t[2]) > 59) return { ok: false, problem: `${time || 'the time'} is not a time (HH:MM)` };
  if (!isTimeZone(zone)) return { ok: false, problem: `${String(zone)} is not a time zone` };
  const wall = Date.UTC(d[0], d[1] - 1, d[2], Number(t[1]), Number(t[2]));
  // The offsets around that wall time: at most two (a change of offset near it).
  const offsets = new Set([offsetAt(wall - 86_400_000, zone), offsetAt(wall, zone), offsetAt(wall + 86_400_000, zone)]);
  const candidates = [...offsets]
    .map((o) => wall - o)
    .filter((instant) => {
      const back = wallTimeOf(new Date(instant), zone);
      return back.date === date && back.time === time;
    })
    .sort((a, b) => a - b);
  if (candidates.length === 0) {
    return { ok: false, problem: `${date} ${time} does not exist in ${zone} (the clocks skip it): choose another time` };
  }
  return { ok: true, instant: new Date(candidates[0]) };
}

export interface ForwardInstant {
  instant: Date;
  /** The wall-clock time (HH:MM) the instant shows in the zone: the one asked for, or the first after it that exists. */
  time: string;
  /** True when the time asked for does not exist on that day (the clocks skip it) and `time` is the first that does. */
  moved: boolean;
}

/**
 * The instant of `date` `time` in `zone` for a schedule that must happen on that day (the posting
 * queue's weekly slots): as zonedToInstant, except that a time the clocks skip (02:30 on a
 * spring-forward night in Europe/Berlin) moves to the first wall-clock time that exists after it
 * (03:00, the end of the gap), said by `moved`. A time that happens twice is its first occurrence.
 * Null for a day the zone skips entirely, or input that is not a date, a time or a zone.
 */
export function zonedToInstantForward(date: string, time: string, zone: string): ForwardInstant | null {
  const exact = zonedToInstant(date, time, zone);
  if (exact.ok) return { instant: exact.instant, time, moved: false };
  const d = parseDate(date);
  const t = TIME.exec(time);
  if (!d || !t || !isTimeZone(zone)) return null;
  const wall = Date.UTC(d[0], d[1] - 1, d[2], Number(t[1]), Number(t[2]));
  const before = offsetAt(wall - 86_400_000, zone);
  const after = offsetAt(wall + 86_400_000, zone);
  // A gap is the offset growing (the clocks jump forward): the change happens at an instant
  // between wall − after and wall − before. Search it to the second: the first instant on the
  // new offset is the first wall-clock time after the skipped one.
  if (after <= before) return null;
  let lo = Math.floor((wall - after) / 1000);
  let hi = Math.ceil((wall - before) / 1000);
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetAt(mid * 1000, zone) === after) hi = mid;
    else lo = mid + 1;
  }
  const instant = new Date(lo * 1000);
  const shown = wallTimeOf(instant, zone);
  if (shown.date !== date) return null;
  return { instant, time: shown.time, moved: true };
}

/** The first instant of day `date` in `zone` (midnight, or the first minute after a skipped midnight). */
export function startOfDay(date: string, zone: string): Date {
  for (let minutes = 0; minutes < 24 * 60; minutes += 15) {
    const r = zonedToInstant(date, `${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`, zone);
    if (r.ok) return r.instant;
  }
  throw new Error(`day ${date} has no time in ${zone}`);
}

/** The calendar day before `date` (YYYY-MM-DD), in the proleptic Gregorian calendar. */
export function previousDate(date: string): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() - 1);
  return d.toISOString().slice(0, 10);
}

/** `date` plus `days` (calendar days, no zone involved). */
export function addDays(date: string, days: number): string {
  const d = parseDate(date);
  if (!d) throw new Error(`not a date: ${date}`);
  return new Date(Date.UTC(d[0], d[1] - 1, d[2] + days)).toISOString().slice(0, 10);
}

/** 0 = Monday … 6 = Sunday. */
export function weekdayOf(date: string): number {
  const d = parseDate(date);
  if (!d) throw new Error(`not a date: ${date}`);
  return (new Date(Date.UTC(d[0], d[1] - 1, d[2])).getUTCDay() + 6) % 7;
}

/** "Asia/Kolkata (UTC+05:30)" at `instant`. */
export function zoneLabel(zone: string, instant: Date): string {
  return `${zone} (UTC${offsetLabel(offsetAt(instant.getTime(), zone))})`;
}
