/**
 * Wall-clock time in a workspace's time zone, from the IANA database that ships with Node
 * (Intl). Pure: every function takes the instant it works on.
 *
 * The digest schedule compares wall-clock values only (local date, hour, minute) and never
 * converts a local time back to an instant, so the days around a daylight-saving change need
 * no special case: a day's 08:00 is reached once whether the day lasts 23, 24 or 25 hours, and
 * an hour that does not exist (02:30 on a spring-forward night) is simply passed.
 */

export interface LocalTime {
  /** YYYY-MM-DD */
  date: string;
  hour: number;
  minute: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** An IANA zone name such as `Europe/Paris` or `UTC`, known to this Node's time-zone data. */
export function isValidTimeZone(name: string): boolean {
  // Names only: Intl also takes offsets such as "+01:00", which have no daylight-saving rules
  // and would silently drift by an hour twice a year for a person who meant a place.
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+){0,2}$/.test(name) || name.length > 64) return false;
  try {
    formatter(name);
    return true;
  } catch {
    return false;
  }
}

export function localTime(instant: Date, timeZone: string): LocalTime {
  const parts: Record<string, string> = {};
  for (const p of formatter(timeZone).formatToParts(instant)) parts[p.type] = p.value;
  return {
    date: `${parts.year}-${parts.month}-${parts.day}`,
    hour: Number(parts.hour),
    minute: Number(parts.minute),
  };
}

/** `2026-12-01 08:05`, in the zone: how the mails show times. */
export function formatLocal(instant: Date, timeZone: string): string {
  const t = localTime(instant, timeZone);
  return `${t.date} ${String(t.hour).padStart(2, '0')}:${String(t.minute).padStart(2, '0')}`;
}

/** The calendar day before `date` (YYYY-MM-DD), in the proleptic Gregorian calendar. */
export function previousDate(date: string): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() - 1);
  return d.toISOString().slice(0, 10);
}

/** Orders wall-clock values (date, then hour, then minute). */
export function compareLocal(a: LocalTime, b: LocalTime): number {
  if (a.date !== b.date) return a.date < b.date ? -1 : 1;
  if (a.hour !== b.hour) return a.hour - b.hour;
  return a.minute - b.minute;
}
