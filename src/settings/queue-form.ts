import { WEEKDAYS, type QueueSlot, type Weekday } from '../posting-queue/queue-slots';
import { field } from './page-input';

/**
 * The posting queue's form on the page (/settings/queue): one text field per weekday with its
 * times ("09:00, 15:30"), and the time zone. Pure: it reads what was typed, and names the day
 * of each problem; the service checks the schedule again by the API's rules.
 */

export const DAY_NAMES: Record<Weekday, string> = {
  mon: 'Monday',
  tue: 'Tuesday',
  wed: 'Wednesday',
  thu: 'Thursday',
  fri: 'Friday',
  sat: 'Saturday',
  sun: 'Sunday',
};

export interface QueueFormValues {
  timezone: string;
  /** What was typed for each day. */
  days: Record<Weekday, string>;
}

export type QueueFormResult = { ok: true; slots: QueueSlot[] } | { ok: false; problem: string };

/** The form as sent. */
export function readQueueValues(body: unknown): QueueFormValues {
  return {
    timezone: field(body, 'timezone'),
    days: Object.fromEntries(WEEKDAYS.map((d) => [d, field(body, d)])) as Record<Weekday, string>,
  };
}

/** A schedule's slots as the form shows them: each day's times, comma-separated. */
export function valuesOf(schedule: { timezone: string; slots: readonly QueueSlot[] }): QueueFormValues {
  const days = Object.fromEntries(WEEKDAYS.map((d) => [d, ''])) as Record<Weekday, string>;
  for (const d of WEEKDAYS) {
    days[d] = schedule.slots
      .filter((s) => s.day === d)
      .map((s) => s.time)
      .join(', ');
  }
  return { timezone: schedule.timezone, days };
}

/**
 * The slots typed: times separated by commas or spaces, "9:00" read as 09:00. Each problem names
 * its day: "Tuesday: “9am” is not a time (HH:MM, from 00:00 to 23:59)".
 */
export function slotsOf(values: QueueFormValues): QueueFormResult {
  const slots: QueueSlot[] = [];
  const problems: string[] = [];
  for (const day of WEEKDAYS) {
    const seen = new Set<string>();
    for (const token of values.days[day].split(/[\s,;]+/).filter((t) => t !== '')) {
      const m = /^(\d{1,2})[:.h](\d{2})$/.exec(token);
      const time = m && Number(m[1]) <= 23 && Number(m[2]) <= 59 ? `${m[1].padStart(2, '0')}:${m[2]}` : null;
      if (!time) {
        problems.push(`${DAY_NAMES[day]}: “${token.slice(0, 20)}” is not a time (HH:MM, from 00:00 to 23:59)`);
        continue;
      }
      if (seen.has(time)) {
        problems.push(`${DAY_NAMES[day]}: ${time} is listed twice`);
        continue;
      }
      seen.add(time);
      slots.push({ day, time });
    }
  }
  return problems.length > 0 ? { ok: false, problem: problems.join('; ') } : { ok: true, slots };
}
