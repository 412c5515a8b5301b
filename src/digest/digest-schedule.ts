import { compareLocal, localTime, previousDate } from '../common/zoned-time';

/** A window of failure times a digest reports on: [start, end). */
export interface DigestWindow {
  start: Date;
  end: Date;
}

export const FIRST_WINDOW_MS = 24 * 3_600_000;

export interface DueInput {
  now: Date;
  timeZone: string;
  /** The local hour (0–23) the digest goes out at. */
  hour: number;
  /** When the digest was switched on. */
  enabledAt: Date;
  /** The local day of the workspace's latest digest, if any (YYYY-MM-DD). */
  lastDate: string | null;
}

/**
 * The local day whose digest is due at `now`, or null when none is.
 *
 * The sweep runs in UTC (every minute) and asks this for every workspace; a day is due from its
 * local hour on, and stays due until it is claimed. So:
 * - the latest day whose hour has been reached is the one due: the hour has passed today, so
 *   today; not yet, so yesterday. After downtime that is still one day, the latest: a missed
 *   day is sent once when Herald comes back, not once per missed day;
 * - a day at or before the latest digest's day is never due again (a change of time zone that
 *   moves the local date back cannot produce a second digest for a day);
 * - a day whose hour had passed before the digest was switched on was not missed: enabling it at
 *   15:00 with an 08:00 digest sends the first one tomorrow at 08:00, not at once.
 */
export function dueLocalDate(input: DueInput): string | null {
  const now = localTime(input.now, input.timeZone);
  const day = now.hour >= input.hour ? now.date : previousDate(now.date);
  if (input.lastDate !== null && day <= input.lastDate) return null;
  const enabled = localTime(input.enabledAt, input.timeZone);
  if (compareLocal({ date: day, hour: input.hour, minute: 0 }, enabled) <= 0) return null;
  return day;
}

/**
 * What a digest made at `now` reports on: since the previous digest, or the last 24 hours for a
 * first one and for the first one after the digest was switched back on (the months it was off
 * are not news). A previous end after `now` (hosts whose clocks disagree) gives an empty window
 * rather than a negative one.
 */
export function digestWindow(now: Date, previousEnd: Date | null, enabledAt: Date): DigestWindow {
  const continuous = previousEnd !== null && previousEnd.getTime() >= enabledAt.getTime();
  const start = continuous ? previousEnd : new Date(now.getTime() - FIRST_WINDOW_MS);
  return { start: start.getTime() > now.getTime() ? now : start, end: now };
}
