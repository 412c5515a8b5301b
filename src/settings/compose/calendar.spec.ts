import { calendarRange, dayLabel, placeOnDays } from './calendar';

describe('the calendar', () => {
  it('lays out a week from Monday, in the zone, with the links around it', () => {
    const week = calendarRange('week', '2026-12-03', 'Asia/Kolkata');
    expect(week.days.map((d) => d.date)).toEqual([
      '2026-11-30',
      '2026-12-01',
      '2026-12-02',
      '2026-12-03',
      '2026-12-04',
      '2026-12-05',
      '2026-12-06',
    ]);
    expect(week.from.toISOString()).toBe('2026-11-29T18:30:00.000Z');
    expect(week.to.toISOString()).toBe('2026-12-06T18:30:00.000Z');
    expect([week.previous, week.next, week.title]).toEqual(['2026-11-23', '2026-12-07', 'Week of 30 Nov 2026']);
    expect(dayLabel('2026-12-07')).toBe('Mon 7 Dec');
  });

  it('lays out a month in whole weeks, marking the days of the month', () => {
    const month = calendarRange('month', '2026-12-15', 'UTC');
    expect(month.days[0].date).toBe('2026-11-30');
    expect(month.days[month.days.length - 1].date).toBe('2027-01-03');
    expect(month.days.length % 7).toBe(0);
    expect(month.days.filter((d) => d.inRange)).toHaveLength(31);
    expect([month.previous, month.next, month.title]).toEqual(['2026-11-01', '2027-01-01', 'December 2026']);
  });

  it('keeps a day of 23 hours 23 hours long (the clocks go forward), and places posts on their day in the zone', () => {
    const week = calendarRange('week', '2026-03-29', 'Europe/Paris');
    const sunday = week.days[6];
    expect(sunday.date).toBe('2026-03-29');
    expect(sunday.end.getTime() - sunday.start.getTime()).toBe(23 * 3_600_000);
    // 23:30 UTC on Saturday is already Sunday 00:30 in Paris.
    const posts = [
      { id: 'late', at: '2026-03-28T23:30:00Z' },
      { id: 'early', at: '2026-03-28T08:00:00Z' },
      { id: 'outside', at: '2026-04-10T08:00:00Z' },
    ];
    const placed = placeOnDays(week.days, posts, (p) => new Date(p.at), 'Europe/Paris');
    expect(placed[5].posts.map((p) => [p.post.id, p.time])).toEqual([['early', '09:00']]);
    expect(placed[6].posts.map((p) => [p.post.id, p.time])).toEqual([['late', '00:30']]);
    expect(placed.flatMap((d) => d.posts).map((p) => p.post.id)).not.toContain('outside');
  });
});
