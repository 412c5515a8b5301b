import fc from 'fast-check';
import { digestWindow, dueLocalDate, FIRST_WINDOW_MS } from './digest-schedule';
import { localTime } from '../common/zoned-time';

const MIN = 60_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * Drives dueLocalDate the way the sweep does: a tick every `stepMs` from `from` to `to`, the
 * claimed day remembered as the latest. Returns each claim with the instant it happened.
 */
function simulate(o: { from: Date; to: Date; stepMs: number; timeZone: string; hour: number; enabledAt?: Date; lastDate?: string | null }) {
  const claims: { day: string; at: Date }[] = [];
  let last = o.lastDate ?? null;
  for (let t = o.from.getTime(); t <= o.to.getTime(); t += o.stepMs) {
    const now = new Date(t);
    const day = dueLocalDate({ now, timeZone: o.timeZone, hour: o.hour, enabledAt: o.enabledAt ?? new Date(0), lastDate: last });
    if (day !== null) {
      claims.push({ day, at: now });
      last = day;
    }
  }
  return claims;
}

describe('dueLocalDate', () => {
  it('makes a New York digest at 08:00 local exactly once on each day around the spring-forward change', () => {
    // 2027-03-14: clocks go from 02:00 EST to 03:00 EDT. 08:00 is 13:00Z before, 12:00Z after.
    const claims = simulate({
      from: new Date('2027-03-11T00:00:00Z'),
      to: new Date('2027-03-17T23:59:00Z'),
      stepMs: MIN,
      timeZone: 'America/New_York',
      hour: 8,
      lastDate: '2027-03-10',
    });
    expect(claims.map((c) => [c.day, c.at.toISOString()])).toEqual([
      ['2027-03-11', '2027-03-11T13:00:00.000Z'],
      ['2027-03-12', '2027-03-12T13:00:00.000Z'],
      ['2027-03-13', '2027-03-13T13:00:00.000Z'],
      ['2027-03-14', '2027-03-14T12:00:00.000Z'],
      ['2027-03-15', '2027-03-15T12:00:00.000Z'],
      ['2027-03-16', '2027-03-16T12:00:00.000Z'],
      ['2027-03-17', '2027-03-17T12:00:00.000Z'],
    ]);
  });

  it('makes a New York digest at 08:00 local exactly once on each day around the fall-back change', () => {
    // 2027-11-07: clocks go from 02:00 EDT back to 01:00 EST (a 25-hour day).
    const claims = simulate({
      from: new Date('2027-11-05T00:00:00Z'),
      to: new Date('2027-11-09T23:59:00Z'),
      stepMs: MIN,
      timeZone: 'America/New_York',
      hour: 8,
      lastDate: '2027-11-04',
    });
    expect(claims.map((c) => [c.day, c.at.toISOString()])).toEqual([
      ['2027-11-05', '2027-11-05T12:00:00.000Z'],
      ['2027-11-06', '2027-11-06T12:00:00.000Z'],
      ['2027-11-07', '2027-11-07T13:00:00.000Z'],
      ['2027-11-08', '2027-11-08T13:00:00.000Z'],
      ['2027-11-09', '2027-11-09T13:00:00.000Z'],
    ]);
  });

  it('sends an hour that does not exist on a spring-forward night at the first minute after it', () => {
    // 02:00 does not happen in New York on 2027-03-14: the digest goes at 03:00 EDT (07:00Z).
    const claims = simulate({
      from: new Date('2027-03-13T00:00:00Z'),
      to: new Date('2027-03-15T23:59:00Z'),
      stepMs: MIN,
      timeZone: 'America/New_York',
      hour: 2,
      lastDate: '2027-03-12',
    });
    expect(claims.map((c) => [c.day, c.at.toISOString()])).toEqual([
      ['2027-03-13', '2027-03-13T07:00:00.000Z'],
      ['2027-03-14', '2027-03-14T07:00:00.000Z'],
      ['2027-03-15', '2027-03-15T06:00:00.000Z'],
    ]);
  });

  it('sends an hour that happens twice on a fall-back night once, at its first occurrence', () => {
    const claims = simulate({
      from: new Date('2027-11-07T00:00:00Z'),
      to: new Date('2027-11-07T23:59:00Z'),
      stepMs: MIN,
      timeZone: 'America/New_York',
      hour: 1,
      lastDate: '2027-11-06',
    });
    expect(claims.map((c) => c.at.toISOString())).toEqual(['2027-11-07T05:00:00.000Z']);
  });

  it('catches up a missed day once, not once per missed day', () => {
    // Down from 2027-05-01 07:00 to 2027-05-04 10:00 (hour 8, UTC): one digest, for the 4th.
    expect(
      dueLocalDate({ now: new Date('2027-05-04T10:00:00Z'), timeZone: 'UTC', hour: 8, enabledAt: new Date(0), lastDate: '2027-04-30' }),
    ).toBe('2027-05-04');
    // Back before the hour: yesterday's digest is the one missed.
    expect(
      dueLocalDate({ now: new Date('2027-05-04T07:00:00Z'), timeZone: 'UTC', hour: 8, enabledAt: new Date(0), lastDate: '2027-04-30' }),
    ).toBe('2027-05-03');
    expect(
      dueLocalDate({ now: new Date('2027-05-04T10:00:00Z'), timeZone: 'UTC', hour: 8, enabledAt: new Date(0), lastDate: '2027-05-04' }),
    ).toBeNull();
  });

  it('does not treat the hours before the digest was switched on as missed', () => {
    const enabledAt = new Date('2027-05-04T15:00:00Z');
    expect(dueLocalDate({ now: new Date('2027-05-04T15:01:00Z'), timeZone: 'UTC', hour: 8, enabledAt, lastDate: null })).toBeNull();
    expect(dueLocalDate({ now: new Date('2027-05-05T07:59:00Z'), timeZone: 'UTC', hour: 8, enabledAt, lastDate: null })).toBeNull();
    expect(dueLocalDate({ now: new Date('2027-05-05T08:00:00Z'), timeZone: 'UTC', hour: 8, enabledAt, lastDate: null })).toBe('2027-05-05');
    // Switched on before the hour: today's digest is due at the hour.
    expect(
      dueLocalDate({
        now: new Date('2027-05-04T08:00:00Z'),
        timeZone: 'UTC',
        hour: 8,
        enabledAt: new Date('2027-05-04T07:30:00Z'),
        lastDate: null,
      }),
    ).toBe('2027-05-04');
  });

  it('never makes a second digest for a day when the time zone moves the local date back', () => {
    // Sent for 2027-05-05 in Asia/Tokyo; the zone becomes America/Los_Angeles, where it is still the 4th.
    expect(
      dueLocalDate({
        now: new Date('2027-05-05T00:30:00Z'),
        timeZone: 'America/Los_Angeles',
        hour: 8,
        enabledAt: new Date(0),
        lastDate: '2027-05-05',
      }),
    ).toBeNull();
  });

  const ZONES = [
    'UTC',
    'America/New_York',
    'Europe/London',
    'Europe/Paris',
    'Australia/Sydney',
    'Australia/Lord_Howe',
    'Asia/Kolkata',
    'America/St_Johns',
    'Pacific/Chatham',
    'Pacific/Apia',
  ];

  it('property: ticking through any stretch of days claims consecutive local days, once each, at or just after the hour', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES),
        fc.integer({ min: 0, max: 23 }),
        fc.date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2035-01-01T00:00:00Z'), noInvalidDate: true }),
        fc.constantFrom(MIN, 5 * MIN, 15 * MIN),
        (timeZone, hour, start, stepMs) => {
          const from = new Date(Math.floor(start.getTime() / stepMs) * stepMs);
          const to = new Date(from.getTime() + 10 * DAY);
          const first = localTime(from, timeZone);
          const claims = simulate({ from, to, stepMs, timeZone, hour, lastDate: first.date });
          // Every claim is for the day after the previous one (no day skipped, none twice).
          let expected = first.date;
          for (const c of claims) {
            const next = new Date(`${expected}T00:00:00Z`);
            next.setUTCDate(next.getUTCDate() + 1);
            expected = next.toISOString().slice(0, 10);
            expect(c.day).toBe(expected);
            // Claimed on that local day, at the hour or within the first tick after it; an
            // hour that a daylight-saving jump removes is passed at the first minute after it.
            const at = localTime(c.at, timeZone);
            expect(at.date).toBe(c.day);
            expect(at.hour).toBeGreaterThanOrEqual(hour);
            const before = localTime(new Date(c.at.getTime() - stepMs), timeZone);
            expect(before.date < c.day || before.hour < hour).toBe(true);
          }
          // Ten days of ticking give 9 or 10 digests (depending on where the hour falls).
          expect(claims.length).toBeGreaterThanOrEqual(9);
          expect(claims.length).toBeLessThanOrEqual(11);
        },
      ),
      { numRuns: 40, seed: 20261201 },
    );
  });
});

describe('digestWindow', () => {
  const now = new Date('2027-05-05T08:00:00Z');

  it('reports on the 24 hours before a first digest', () => {
    expect(digestWindow(now, null, new Date('2027-05-01T00:00:00Z'))).toEqual({
      start: new Date(now.getTime() - FIRST_WINDOW_MS),
      end: now,
    });
  });

  it('reports on everything since the previous digest, however long ago (catch-up after downtime)', () => {
    const previous = new Date('2027-05-01T08:00:30Z');
    expect(digestWindow(now, previous, new Date('2027-04-01T00:00:00Z'))).toEqual({ start: previous, end: now });
  });

  it('starts afresh (24 hours) after the digest was switched off and on again', () => {
    expect(digestWindow(now, new Date('2027-02-01T08:00:00Z'), new Date('2027-05-04T12:00:00Z')).start).toEqual(
      new Date(now.getTime() - DAY),
    );
  });

  it('never makes a window that ends before it starts (hosts whose clocks disagree)', () => {
    expect(digestWindow(now, new Date(now.getTime() + 5000), new Date(0))).toEqual({ start: now, end: now });
  });
});
