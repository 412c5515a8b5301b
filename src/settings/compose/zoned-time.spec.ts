import fc from 'fast-check';
import { addDays, isTimeZone, offsetAt, startOfDay, wallTimeOf, weekdayOf, zonedToInstant, zoneLabel } from './zoned-time';

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
