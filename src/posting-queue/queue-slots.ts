import { addDays, isTimeZone, wallTimeOf, weekdayOf, zonedToInstantForward } from '../common/zoned-time';

/**
 * The posting queue's decisions, pure (docs/api.md "The posting queue"): a weekly schedule of
 * slots in a time zone, the instants those slots fall on, and the next slot free for every
 * target of a post. `now` and the slots already taken are passed in; nothing here reads a clock
 * or the database.
 *
 * A slot's time that does not exist on a day (the spring clock change: 02:30 in Europe/Berlin on
 * the last Sunday of March) is taken at the first time that does (03:00) and marked `moved`; a
 * time that happens twice (the autumn change) is its first occurrence. Both come from
 * common/zoned-time.ts, the one time-zone helper.
 */

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** At most this many slots in a week's schedule (14 a day, a post every hour of a working day, fits with room). */
export const MAX_SLOTS = 100;

/** How far ahead a queued post looks for a free slot: a year and a day (a leap year's slot on the same weekday). */
export const HORIZON_DAYS = 366;

export interface QueueSlot {
  day: Weekday;
  /** HH:MM, 00:00 to 23:59, in the schedule's zone. */
  time: string;
}

export interface QueueSchedule {
  /** IANA zone name. */
  timezone: string;
  slots: QueueSlot[];
}

/** One slot of a schedule on one day: the instant it falls on. */
export interface SlotOccurrence {
  at: Date;
  timezone: string;
  /** The local date (YYYY-MM-DD) and weekday of the slot. */
  date: string;
  day: Weekday;
  /** The slot's time as scheduled. */
  time: string;
  /** The wall-clock time it happens at: `time`, or the first that exists after it when `moved`. */
  localTime: string;
  /** True when `time` does not exist on `date` (the clocks skip it). */
  moved: boolean;
}

const TIME = /^([01]\d|2[0-3]):[0-5]\d$/;

/**
 * What is wrong with a schedule as sent, each problem naming its field (`timezone`,
 * `slots.3.time`); empty when it is valid. Duplicates are refused rather than folded, so what is
 * saved is what was sent.
 */
export function scheduleProblems(input: { timezone: unknown; slots: unknown }): string[] {
  const problems: string[] = [];
  if (!isTimeZone(input.timezone)) {
    problems.push(`timezone: ${JSON.stringify(input.timezone)} is not an IANA time zone name (e.g. Europe/Berlin)`);
  }
  if (!Array.isArray(input.slots)) return [...problems, 'slots must be a list of { day, time }'];
  if (input.slots.length > MAX_SLOTS) problems.push(`slots: at most ${MAX_SLOTS} slots a week, this list has ${input.slots.length}`);
  const seen = new Map<string, number>();
  (input.slots as unknown[]).forEach((slot, i) => {
    if (typeof slot !== 'object' || slot === null || Array.isArray(slot)) {
      problems.push(`slots.${i} must be an object { day, time }`);
      return;
    }
    const { day, time } = slot as Record<string, unknown>;
    let ok = true;
    if (typeof day !== 'string' || !(WEEKDAYS as readonly string[]).includes(day)) {
      problems.push(`slots.${i}.day must be one of ${WEEKDAYS.join(', ')}`);
      ok = false;
    }
    if (typeof time !== 'string' || !TIME.test(time)) {
      problems.push(`slots.${i}.time must be a time HH:MM from 00:00 to 23:59`);
      ok = false;
    }
    if (!ok) return;
    const key = `${String(day)} ${String(time)}`;
    const first = seen.get(key);
    if (first !== undefined) problems.push(`slots.${i} repeats ${key} (slots.${first})`);
    else seen.set(key, i);
  });
  return problems;
}

/** The slots in week order (Monday first, then by time): how a schedule is saved and shown. */
export function sortSlots(slots: readonly QueueSlot[]): QueueSlot[] {
  return [...slots].sort((a, b) => WEEKDAYS.indexOf(a.day) - WEEKDAYS.indexOf(b.day) || (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
}

/**
 * Every slot of `schedule` that falls after `from` and at or before `to`, in time order. Two
 * slots of a day that fall on one instant (02:30 moved to 03:00 where 03:00 is a slot too) are
 * one occurrence: the slot that was not moved.
 */
export function occurrencesBetween(schedule: QueueSchedule, from: Date, to: Date): SlotOccurrence[] {
  if (schedule.slots.length === 0 || to.getTime() <= from.getTime()) return [];
  const byDay = new Map<Weekday, string[]>();
  for (const s of schedule.slots) byDay.set(s.day, [...(byDay.get(s.day) ?? []), s.time]);
  // Local dates that can hold an instant of the range: one more on each side for the offset.
  const first = addDays(wallTimeOf(from, schedule.timezone).date, -1);
  const last = addDays(wallTimeOf(to, schedule.timezone).date, 1);
  const out: SlotOccurrence[] = [];
  for (let date = first; date <= last; date = addDays(date, 1)) {
    const day = WEEKDAYS[weekdayOf(date)];
    const times = byDay.get(day);
    if (!times) continue;
    for (const time of times) {
      const found = zonedToInstantForward(date, time, schedule.timezone);
      if (!found) continue;
      const t = found.instant.getTime();
      if (t <= from.getTime() || t > to.getTime()) continue;
      out.push({ at: found.instant, timezone: schedule.timezone, date, day, time, localTime: found.time, moved: found.moved });
    }
  }
  out.sort((a, b) => a.at.getTime() - b.at.getTime() || Number(a.moved) - Number(b.moved));
  return out.filter((o, i) => i === 0 || out[i - 1].at.getTime() !== o.at.getTime());
}

export interface SlotSearch {
  /** Slots strictly after this instant count. */
  now: Date;
  /** Each target account with the schedule it follows (its own, else the workspace's). */
  targets: readonly { accountId: string; schedule: QueueSchedule }[];
  /** Instants (ms since the epoch) already taken, by account id. */
  taken: ReadonlyMap<string, ReadonlySet<number>>;
  /** A slot must fall before this instant (the post's publishBy), when given. */
  before?: Date | null;
  /** How far to look (default HORIZON_DAYS). */
  horizonDays?: number;
}

export type SlotChoice =
  | { ok: true; at: Date; slots: Map<string, SlotOccurrence> }
  /**
   * `no_slots`: these targets' schedules have no slot at all. `no_common_slot`: the targets'
   * schedules never share an instant within the horizon. `full`: they do, but every shared
   * slot is taken. `deadline`: the free shared slots all fall at or after `before`.
   */
  | { ok: false; reason: 'no_slots'; accountIds: string[] }
  | { ok: false; reason: 'no_common_slot' | 'full' | 'deadline' };

const DAY_MS = 86_400_000;
/** The search walks the horizon a week at a time: the first free slot is usually in the first week. */
const WINDOW_MS = 7 * DAY_MS;

/**
 * The first instant after `now` that is a slot for every target and taken on none of them.
 * Every target has a slot there (each in its own schedule and zone: two accounts with the
 * workspace's schedule share every slot; accounts with their own schedules share the instants
 * where their slots coincide).
 */
export function nextFreeSlot(search: SlotSearch): SlotChoice {
  const empty = search.targets.filter((t) => t.schedule.slots.length === 0).map((t) => t.accountId);
  if (search.targets.length === 0 || empty.length > 0) return { ok: false, reason: 'no_slots', accountIds: empty };
  const end = search.now.getTime() + (search.horizonDays ?? HORIZON_DAYS) * DAY_MS;
  const limit = search.before ? Math.min(end, search.before.getTime() - 1) : end;
  let shared = false;
  for (let from = search.now.getTime(); from < end; from += WINDOW_MS) {
    const to = Math.min(from + WINDOW_MS, end);
    const perTarget = search.targets.map(
      (t) => new Map(occurrencesBetween(t.schedule, new Date(from), new Date(to)).map((o) => [o.at.getTime(), o])),
    );
    const [firstTarget, ...others] = perTarget;
    for (const [at] of firstTarget) {
      if (!others.every((m) => m.has(at))) continue;
      shared = true;
      if (at > limit) return { ok: false, reason: 'deadline' };
      if (search.targets.some((t) => search.taken.get(t.accountId)?.has(at))) continue;
      const slots = new Map(search.targets.map((t, i) => [t.accountId, perTarget[i].get(at)!]));
      return { ok: true, at: new Date(at), slots };
    }
  }
  return { ok: false, reason: shared ? 'full' : 'no_common_slot' };
}
