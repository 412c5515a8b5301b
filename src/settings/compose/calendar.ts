import { addDays, parseDate, startOfDay, wallTimeOf, weekdayOf } from '../../common/zoned-time';

/**
 * The days of the calendar's week or month in a person's time zone, and the posts placed on
 * them. Pure: the controller reads the posts, this lays them out. Weeks start on Monday
 * (ISO 8601).
 */

export type CalendarView = 'week' | 'month';

export interface CalendarDay {
  /** YYYY-MM-DD in the zone. */
  date: string;
  /** The day's first instant in the zone, and the next day's (a day is 23 to 25 hours long). */
  start: Date;
  end: Date;
  /** False for the days of the month view that belong to the weeks around the month. */
  inRange: boolean;
}

export interface CalendarRange {
  view: CalendarView;
  days: CalendarDay[];
  from: Date;
  to: Date;
  /** The date links of the previous and next week or month. */
  previous: string;
  next: string;
  /** "Week of 7 Dec 2026", "December 2026". */
  title: string;
}

const dayFormat = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', weekday: 'short', day: 'numeric', month: 'short' });
const longDay = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' });
const monthFormat = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', month: 'long', year: 'numeric' });
const weekFormat = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', day: 'numeric', month: 'short', year: 'numeric' });

const utcNoon = (date: string) => {
  const [y, m, d] = parseDate(date)!;
  return new Date(Date.UTC(y, m - 1, d, 12));
};

/** "Mon 7 Dec". */
export const dayLabel = (date: string): string => dayFormat.format(utcNoon(date));
/** "Monday 7 December 2026". */
export const longDayLabel = (date: string): string => longDay.format(utcNoon(date));

/** The week (Monday to Sunday) or the month around `date`, as days of `zone`. */
export function calendarRange(view: CalendarView, date: string, zone: string): CalendarRange {
  if (!parseDate(date)) throw new Error(`not a date: ${date}`);
  let first: string;
  let count: number;
  let inRange: (d: string) => boolean;
  let previous: string;
  let next: string;
  let title: string;
  if (view === 'week') {
    first = addDays(date, -weekdayOf(date));
    count = 7;
    inRange = () => true;
    previous = addDays(first, -7);
    next = addDays(first, 7);
    title = `Week of ${weekFormat.format(utcNoon(first))}`;
  } else {
    const month = date.slice(0, 7);
    const firstOfMonth = `${month}-01`;
    const [y, m] = parseDate(firstOfMonth)!;
    const lastOfMonth = new Date(Date.UTC(y, m, 0)).toISOString().slice(0, 10);
    first = addDays(firstOfMonth, -weekdayOf(firstOfMonth));
    const last = addDays(lastOfMonth, 6 - weekdayOf(lastOfMonth));
    count = Math.round((utcNoon(last).getTime() - utcNoon(first).getTime()) / 86_400_000) + 1;
    inRange = (d) => d.startsWith(month);
    previous = new Date(Date.UTC(y, m - 2, 1)).toISOString().slice(0, 10);
    next = new Date(Date.UTC(y, m, 1)).toISOString().slice(0, 10);
    title = monthFormat.format(utcNoon(firstOfMonth));
  }
  const dates = Array.from({ length: count + 1 }, (_, i) => addDays(first, i));
  const starts = dates.map((d) => startOfDay(d, zone));
  const days = dates.slice(0, count).map((d, i) => ({ date: d, start: starts[i], end: starts[i + 1], inRange: inRange(d) }));
  return { view, days, from: starts[0], to: starts[count], previous, next, title };
}

/** The posts of each day, by time; `at` reads a post's instant. Posts outside the range are left out. */
export function placeOnDays<T>(days: readonly CalendarDay[], posts: readonly T[], at: (p: T) => Date, zone: string) {
  const sorted = [...posts].sort((a, b) => at(a).getTime() - at(b).getTime());
  return days.map((day) => ({
    ...day,
    posts: sorted.filter((p) => at(p) >= day.start && at(p) < day.end).map((p) => ({ post: p, time: wallTimeOf(at(p), zone).time })),
  }));
}
