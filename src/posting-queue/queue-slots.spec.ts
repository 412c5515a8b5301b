import fc from 'fast-check';
import { wallTimeOf, zonedToInstantForward } from '../common/zoned-time';
import { nextFreeSlot, occurrencesBetween, QueueSchedule, scheduleProblems, sortSlots, WEEKDAYS, type QueueSlot } from './queue-slots';

const DAY = 86_400_000;
const berlin = (slots: QueueSlot[]): QueueSchedule => ({ timezone: 'Europe/Berlin', slots });

describe('zonedToInstantForward', () => {
  it('moves a time the spring change skips to the first time that exists (02:30 → 03:00 in Berlin)', () => {
    // 2027-03-28 is the last Sunday of March: 02:00 CET becomes 03:00 CEST (01:00Z).
    expect(zonedToInstantForward('2027-03-28', '02:30', 'Europe/Berlin')).toEqual({
      instant: new Date('2027-03-28T01:00:00Z'),
      time: '03:00',
      moved: true,
    });
    expect(zonedToInstantForward('2027-03-28', '02:00', 'Europe/Berlin')?.time).toBe('03:00');
    expect(zonedToInstantForward('2027-03-28', '03:00', 'Europe/Berlin')).toEqual({
      instant: new Date('2027-03-28T01:00:00Z'),
      time: '03:00',
      moved: false,
    });
  });

  it('takes the first of a time the autumn change repeats', () => {
    // 2027-10-31: 03:00 CEST becomes 02:00 CET; 02:30 happens at 00:30Z and again at 01:30Z.
    expect(zonedToInstantForward('2027-10-31', '02:30', 'Europe/Berlin')).toEqual({
      instant: new Date('2027-10-31T00:30:00Z'),
      time: '02:30',
      moved: false,
    });
  });

  it('moves a skipped midnight to 01:00 on the same day (America/Santiago, September)', () => {
    // Chile springs forward at 24:00 on the first Saturday of September: 2027-09-05 has no 00:xx.
    const r = zonedToInstantForward('2027-09-05', '00:30', 'America/Santiago');
    expect(r).toMatchObject({ time: '01:00', moved: true });
    expect(wallTimeOf(r!.instant, 'America/Santiago')).toEqual({ date: '2027-09-05', time: '01:00' });
  });

  it('gives every time of every day of a year an instant on that day, at or after the time asked (property)', () => {
    const zones = ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'America/Santiago', 'Asia/Kolkata', 'UTC'];
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.integer({ min: 0, max: 730 }),
        fc.integer({ min: 0, max: 23 }),
        fc.integer({ min: 0, max: 59 }),
        (zone, dayOffset, h, m) => {
          const date = new Date(Date.UTC(2027, 0, 1) + dayOffset * DAY).toISOString().slice(0, 10);
          const time = `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`;
          const r = zonedToInstantForward(date, time, zone);
          expect(r).not.toBeNull();
          const shown = wallTimeOf(r!.instant, zone);
          expect(shown.date).toBe(date);
          expect(shown.time).toBe(r!.time);
          if (r!.moved) {
            expect(r!.time > time).toBe(true);
            // The instant a second before shows a time before the one asked (it is the start of the gap's end).
            expect(wallTimeOf(new Date(r!.instant.getTime() - 1000), zone).time < time).toBe(true);
          } else {
            expect(r!.time).toBe(time);
          }
        },
      ),
      { numRuns: 400, seed: 29 },
    );
  });
});

describe('scheduleProblems', () => {
  it('accepts a valid schedule', () => {
    expect(scheduleProblems({ timezone: 'Europe/Berlin', slots: [{ day: 'mon', time: '09:00' }] })).toEqual([]);
    expect(scheduleProblems({ timezone: 'UTC', slots: [] })).toEqual([]);
  });

  it('names every wrong field: the zone, a day, a time, a duplicate, too many slots', () => {
    expect(scheduleProblems({ timezone: 'Mars/Olympus', slots: [] })).toEqual([
      'timezone: "Mars/Olympus" is not an IANA time zone name (e.g. Europe/Berlin)',
    ]);
    expect(scheduleProblems({ timezone: '+01:00', slots: [] })[0]).toMatch(/^timezone:/);
    expect(
      scheduleProblems({
        timezone: 'UTC',
        slots: [
          { day: 'mon', time: '09:00' },
          { day: 'monday', time: '09:00' },
          { day: 'tue', time: '24:00' },
          { day: 'tue', time: '9:00' },
          { day: 'mon', time: '09:00' },
          'noon',
        ],
      }),
    ).toEqual([
      'slots.1.day must be one of mon, tue, wed, thu, fri, sat, sun',
      'slots.2.time must be a time HH:MM from 00:00 to 23:59',
      'slots.3.time must be a time HH:MM from 00:00 to 23:59',
      'slots.4 repeats mon 09:00 (slots.0)',
      'slots.5 must be an object { day, time }',
    ]);
    const many = Array.from({ length: 101 }, (_, i) => ({
      day: WEEKDAYS[i % 7],
      time: `${String(Math.floor(i / 7)).padStart(2, '0')}:00`,
    }));
    expect(scheduleProblems({ timezone: 'UTC', slots: many })).toEqual(['slots: at most 100 slots a week, this list has 101']);
  });

  it('orders slots Monday first, then by time', () => {
    expect(
      sortSlots([
        { day: 'sun', time: '08:00' },
        { day: 'mon', time: '17:00' },
        { day: 'mon', time: '09:00' },
      ]),
    ).toEqual([
      { day: 'mon', time: '09:00' },
      { day: 'mon', time: '17:00' },
      { day: 'sun', time: '08:00' },
    ]);
  });
});

describe('occurrencesBetween', () => {
  it('lays a week of slots out on the days of the zone', () => {
    const s = berlin([
      { day: 'mon', time: '09:00' },
      { day: 'wed', time: '17:30' },
    ]);
    // 2027-01-04 is a Monday; Berlin is UTC+1 in winter.
    const got = occurrencesBetween(s, new Date('2027-01-04T00:00:00Z'), new Date('2027-01-11T08:00:00Z'));
    expect(got.map((o) => [o.at.toISOString(), o.day, o.time, o.moved])).toEqual([
      ['2027-01-04T08:00:00.000Z', 'mon', '09:00', false],
      ['2027-01-06T16:30:00.000Z', 'wed', '17:30', false],
      ['2027-01-11T08:00:00.000Z', 'mon', '09:00', false],
    ]);
  });

  it('marks a slot the spring change skips as moved to 03:00, and folds it into a 03:00 slot of the same day', () => {
    const moved = occurrencesBetween(
      berlin([{ day: 'sun', time: '02:30' }]),
      new Date('2027-03-27T00:00:00Z'),
      new Date('2027-03-29T00:00:00Z'),
    );
    expect(moved).toEqual([
      {
        at: new Date('2027-03-28T01:00:00Z'),
        timezone: 'Europe/Berlin',
        date: '2027-03-28',
        day: 'sun',
        time: '02:30',
        localTime: '03:00',
        moved: true,
      },
    ]);
    const both = occurrencesBetween(
      berlin([
        { day: 'sun', time: '02:30' },
        { day: 'sun', time: '03:00' },
      ]),
      new Date('2027-03-27T00:00:00Z'),
      new Date('2027-03-29T00:00:00Z'),
    );
    expect(both.map((o) => [o.time, o.moved])).toEqual([['03:00', false]]);
  });

  it('never lists an instant twice, always in order, always inside the range, each on its weekday (property)', () => {
    const slot = fc.record({
      day: fc.constantFrom(...WEEKDAYS),
      time: fc.constantFrom('00:00', '00:30', '02:00', '02:30', '03:00', '09:15', '23:59'),
    });
    fc.assert(
      fc.property(
        fc.constantFrom('Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Pacific/Kiritimati'),
        fc.array(slot, { maxLength: 12 }),
        fc.integer({ min: 0, max: 365 * DAY }),
        fc.integer({ min: 1, max: 20 * DAY }),
        (timezone, slots, start, length) => {
          const from = new Date(Date.UTC(2027, 0, 1) + start);
          const to = new Date(from.getTime() + length);
          const got = occurrencesBetween({ timezone, slots }, from, to);
          for (let i = 0; i < got.length; i++) {
            expect(got[i].at.getTime()).toBeGreaterThan(from.getTime());
            expect(got[i].at.getTime()).toBeLessThanOrEqual(to.getTime());
            if (i > 0) expect(got[i].at.getTime()).toBeGreaterThan(got[i - 1].at.getTime());
            expect(wallTimeOf(got[i].at, timezone)).toEqual({ date: got[i].date, time: got[i].localTime });
            expect(slots).toContainEqual({ day: got[i].day, time: got[i].time });
          }
        },
      ),
      { numRuns: 200, seed: 2029 },
    );
  });
});

describe('nextFreeSlot', () => {
  const weekdays9 = berlin(['mon', 'tue', 'wed', 'thu', 'fri'].map((day) => ({ day: day as QueueSlot['day'], time: '09:00' })));
  const now = new Date('2027-01-04T08:00:00Z'); // Monday 09:00 Berlin exactly

  it('takes the next slot strictly after now', () => {
    const r = nextFreeSlot({ now, targets: [{ accountId: 'a', schedule: weekdays9 }], taken: new Map() });
    expect(r.ok && r.at.toISOString()).toBe('2027-01-05T08:00:00.000Z');
  });

  it('skips a slot taken on any one of the targets', () => {
    const taken = new Map([['b', new Set([Date.parse('2027-01-05T08:00:00Z')])]]);
    const r = nextFreeSlot({
      now,
      targets: [
        { accountId: 'a', schedule: weekdays9 },
        { accountId: 'b', schedule: weekdays9 },
      ],
      taken,
    });
    expect(r.ok && r.at.toISOString()).toBe('2027-01-06T08:00:00.000Z');
  });

  it('takes the first instant that is a slot in every target schedule, whatever their zones', () => {
    // 09:00 Berlin on Wednesdays is 08:00 London: the only instant both schedules share.
    const london: QueueSchedule = {
      timezone: 'Europe/London',
      slots: [
        { day: 'tue', time: '09:00' },
        { day: 'wed', time: '08:00' },
      ],
    };
    const r = nextFreeSlot({
      now,
      targets: [
        { accountId: 'a', schedule: weekdays9 },
        { accountId: 'b', schedule: london },
      ],
      taken: new Map(),
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.at.toISOString()).toBe('2027-01-06T08:00:00.000Z');
    expect(r.slots.get('a')).toMatchObject({ timezone: 'Europe/Berlin', day: 'wed', time: '09:00' });
    expect(r.slots.get('b')).toMatchObject({ timezone: 'Europe/London', day: 'wed', time: '08:00' });
  });

  it('says why when there is nothing to take', () => {
    expect(nextFreeSlot({ now, targets: [{ accountId: 'a', schedule: berlin([]) }], taken: new Map() })).toEqual({
      ok: false,
      reason: 'no_slots',
      accountIds: ['a'],
    });
    const other: QueueSchedule = { timezone: 'Europe/Berlin', slots: [{ day: 'sat', time: '10:00' }] };
    expect(
      nextFreeSlot({
        now,
        targets: [
          { accountId: 'a', schedule: weekdays9 },
          { accountId: 'b', schedule: other },
        ],
        taken: new Map(),
      }),
    ).toEqual({ ok: false, reason: 'no_common_slot' });
    const one = berlin([{ day: 'mon', time: '09:00' }]);
    const all = new Set(occurrencesBetween(one, now, new Date(now.getTime() + 366 * DAY)).map((o) => o.at.getTime()));
    expect(nextFreeSlot({ now, targets: [{ accountId: 'a', schedule: one }], taken: new Map([['a', all]]) })).toEqual({
      ok: false,
      reason: 'full',
    });
    expect(
      nextFreeSlot({ now, targets: [{ accountId: 'a', schedule: one }], taken: new Map(), before: new Date('2027-01-11T08:00:00Z') }),
    ).toEqual({ ok: false, reason: 'deadline' });
  });

  it('takes 03:00 for a 02:30 slot on the night the clocks skip it', () => {
    const r = nextFreeSlot({
      now: new Date('2027-03-27T12:00:00Z'),
      targets: [{ accountId: 'a', schedule: berlin([{ day: 'sun', time: '02:30' }]) }],
      taken: new Map(),
    });
    expect(r.ok && [r.at.toISOString(), r.slots.get('a')?.localTime, r.slots.get('a')?.moved]).toEqual([
      '2027-03-28T01:00:00.000Z',
      '03:00',
      true,
    ]);
  });

  it('always answers the earliest shared slot after now that no target has taken (property)', () => {
    const slot = fc.record({ day: fc.constantFrom(...WEEKDAYS), time: fc.constantFrom('08:00', '09:00', '12:30', '02:30') });
    fc.assert(
      fc.property(
        fc.array(slot, { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 0, max: 300 * DAY }),
        fc.array(fc.nat({ max: 30 }), { maxLength: 15 }),
        (slots, start, takenIdx) => {
          const schedule = berlin(slots);
          const from = new Date(Date.UTC(2027, 0, 1) + start);
          const all = occurrencesBetween(schedule, from, new Date(from.getTime() + 60 * DAY)).map((o) => o.at.getTime());
          const taken = new Set(takenIdx.filter((i) => i < all.length).map((i) => all[i]));
          const expected = all.find((t) => !taken.has(t));
          const r = nextFreeSlot({ now: from, targets: [{ accountId: 'a', schedule }], taken: new Map([['a', taken]]), horizonDays: 60 });
          if (expected === undefined) expect(r.ok).toBe(false);
          else expect(r.ok && r.at.getTime()).toBe(expected);
        },
      ),
      { numRuns: 200, seed: 9 },
    );
  });
});
