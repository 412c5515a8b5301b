import fc from 'fast-check';
import {
  addDays,
  compareLocal,
  formatLocal,
  isTimeZone,
  localTime,
  offsetAt,
  previousDate,
  startOfDay,
  wallTimeOf,
  weekdayOf,
  zonedToInstant,
  zoneLabel,
} from './zoned-time';

const instant = (date: string, time: string, zone: string) => {
  const r = zonedToInstant(date, time, zone);
  if (!r.ok) throw new Error(r.problem);
  return r.instant.toISOString();
};

describe('zoned time', () => {
  it('turns a wall time in a zone into the instant, whatever the offset', () => {
    expect(instant('2026-12-01', '09:00', 'UTC')).toBe('2026-12-01T09:00:00.000Z');
    expect(instant('2026-12-01', '09:00', 'Europe/Paris')).toBe('2026-12-01T08:00:00.000Z');
    expect(instant('2026-07-01', '09:00', 'Europe/Paris')).toBe('2026-07-01T07:00:00.000Z');
    expect(instant('2026-12-01', '09:00', 'Asia/Kolkata')).toBe('2026-12-01T03:30:00.000Z');
    expect(instant('2026-12-01', '23:30', 'America/New_York')).toBe('2026-12-02T04:30:00.000Z');
    expect(instant('2026-12-01', '00:15', 'Pacific/Chatham')).toBe('2026-11-30T10:30:00.000Z');
  });

  it('refuses a time the clocks skip, and takes the first of a time that happens twice', () => {
    const gap = zonedToInstant('2026-03-29', '02:30', 'Europe/Paris');
    expect(gap).toEqual({
      ok: false,
      problem: '2026-03-29 02:30 does not exist in Europe/Paris (the clocks skip it): choose another time',
    });
    // 2026-10-25 02:30 happens at +02:00 and again at +01:00 in Paris: the first one.
    expect(instant('2026-10-25', '02:30', 'Europe/Paris')).toBe('2026-10-25T00:30:00.000Z');
  });

  it('refuses what is not a date, a time or a zone, saying which', () => {
    expect(zonedToInstant('2026-02-30', '09:00', 'UTC')).toEqual({ ok: false, problem: '2026-02-30 is not a date (YYYY-MM-DD)' });
    expect(zonedToInstant('2026-02-01', '24:00', 'UTC')).toEqual({ ok: false, problem: '24:00 is not a time (HH:MM)' });
    expect(zonedToInstant('2026-02-01', '09:00', 'Mars/Olympus')).toEqual({ ok: false, problem: 'Mars/Olympus is not a time zone' });
    expect(isTimeZone('Europe/Paris')).toBe(true);
    expect(isTimeZone('../etc')).toBe(false);
  });

  it('round-trips every minute of any zone: wall time → instant → the same wall time (outside skipped hours)', () => {
    const zones = ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe', 'America/Sao_Paulo', 'Asia/Kathmandu'];
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2035, 0, 1) }), fc.constantFrom(...zones), (ms, zone) => {
        const at = new Date(Math.floor(ms / 60_000) * 60_000);
        const wall = wallTimeOf(at, zone);
        const back = zonedToInstant(wall.date, wall.time, zone);
        expect(back.ok).toBe(true);
        if (!back.ok) return;
        // The same wall time; the same instant unless that wall time happened twice (then the first).
        expect(wallTimeOf(back.instant, zone)).toEqual(wall);
        expect(back.instant.getTime()).toBeLessThanOrEqual(at.getTime());
        expect(at.getTime() - back.instant.getTime()).toBeLessThanOrEqual(3_600_000);
      }),
      { numRuns: 500 },
    );
  });

  it('labels a zone with its offset at that instant, and knows the days', () => {
    expect(zoneLabel('Asia/Kolkata', new Date('2026-12-01T00:00:00Z'))).toBe('Asia/Kolkata (UTC+05:30)');
    expect(zoneLabel('America/New_York', new Date('2026-12-01T00:00:00Z'))).toBe('America/New_York (UTC-05:00)');
    expect(offsetAt(Date.parse('2026-07-01T00:00:00Z'), 'Europe/Paris')).toBe(7_200_000);
    expect(addDays('2026-12-30', 3)).toBe('2027-01-02');
    expect(weekdayOf('2026-12-07')).toBe(0); // a Monday
    expect(startOfDay('2026-12-01', 'Asia/Kolkata').toISOString()).toBe('2026-11-30T18:30:00.000Z');
  });
});

// Wall-clock values as the digest schedule compares them (src/digest/local-time.ts before issue 33).
describe('local time', () => {
  it('reads the wall clock of a zone, daylight saving included', () => {
    expect(localTime(new Date('2027-03-13T13:00:00Z'), 'America/New_York')).toEqual({ date: '2027-03-13', hour: 8, minute: 0 });
    expect(localTime(new Date('2027-03-15T12:00:00Z'), 'America/New_York')).toEqual({ date: '2027-03-15', hour: 8, minute: 0 });
    expect(localTime(new Date('2026-12-31T23:30:00Z'), 'Asia/Kolkata')).toEqual({ date: '2027-01-01', hour: 5, minute: 0 });
    expect(localTime(new Date('2026-06-01T00:00:00Z'), 'UTC')).toEqual({ date: '2026-06-01', hour: 0, minute: 0 });
  });

  it('knows IANA names and refuses offsets and nonsense', () => {
    for (const ok of ['UTC', 'Europe/Paris', 'America/Argentina/Buenos_Aires', 'Etc/GMT+5', 'America/New_York'])
      expect(isTimeZone(ok)).toBe(true);
    for (const bad of ['', '+01:00', 'GMT+01:00', 'Mars/Olympus', 'Europe/Paris ', '../../etc/passwd', 'x'.repeat(65)])
      expect(isTimeZone(bad)).toBe(false);
  });

  it('steps back one calendar day across months, years and leap days', () => {
    expect(previousDate('2027-03-01')).toBe('2027-02-28');
    expect(previousDate('2028-03-01')).toBe('2028-02-29');
    expect(previousDate('2027-01-01')).toBe('2026-12-31');
  });

  it('reads the same wall clock as the composer, and writes it as the mails show it', () => {
    expect(formatLocal(new Date('2026-12-01T07:05:00Z'), 'Europe/Paris')).toBe('2026-12-01 08:05');
    expect(formatLocal(new Date('2026-12-31T23:30:00Z'), 'Asia/Kolkata')).toBe('2027-01-01 05:00');
    const zones = ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe', 'Asia/Kathmandu'];
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2035, 0, 1) }), fc.constantFrom(...zones), (ms, zone) => {
        const at = new Date(ms);
        const local = localTime(at, zone);
        const wall = wallTimeOf(at, zone);
        expect(`${local.date} ${String(local.hour).padStart(2, '0')}:${String(local.minute).padStart(2, '0')}`).toBe(
          `${wall.date} ${wall.time}`,
        );
        expect(formatLocal(at, zone)).toBe(`${wall.date} ${wall.time}`);
        expect(compareLocal(local, local)).toBe(0);
      }),
      { numRuns: 300 },
    );
  });

  it('orders wall-clock values by date, then hour, then minute', () => {
    const at = (date: string, hour: number, minute: number) => ({ date, hour, minute });
    expect(compareLocal(at('2026-12-01', 23, 59), at('2026-12-02', 0, 0))).toBeLessThan(0);
    expect(compareLocal(at('2026-12-01', 9, 0), at('2026-12-01', 8, 59))).toBeGreaterThan(0);
    expect(compareLocal(at('2026-12-01', 8, 5), at('2026-12-01', 8, 6))).toBeLessThan(0);
  });

  it('takes only strings as zones', () => {
    for (const notAName of [undefined, null, 42, { zone: 'UTC' }]) expect(isTimeZone(notAName)).toBe(false);
  });
});
