import fc from 'fast-check';
import { WakeSchedule } from './wake-schedule';

describe('WakeSchedule', () => {
  it('remembers every announced moment, not only the earliest', () => {
    const w = new WakeSchedule();
    w.add(100);
    w.add(120);
    w.add(110);
    expect(w.next()).toBe(100);
    expect(w.popDue(100)).toBe(true);
    expect(w.next()).toBe(110);
    expect(w.popDue(115)).toBe(true);
    expect(w.next()).toBe(120);
    expect(w.popDue(119)).toBe(false);
    expect(w.size).toBe(1);
  });

  it('keeps one entry per moment', () => {
    const w = new WakeSchedule();
    w.add(5);
    w.add(5);
    expect(w.size).toBe(1);
  });

  it('drops the latest moments past its capacity', () => {
    const w = new WakeSchedule(3);
    for (const t of [40, 10, 30, 20]) w.add(t);
    expect(w.size).toBe(3);
    w.popDue(100);
    expect(w.size).toBe(0);
    const v = new WakeSchedule(3);
    for (const t of [40, 10, 30, 20]) v.add(t);
    expect(v.next()).toBe(10);
    v.popDue(30);
    expect(v.next()).toBeUndefined(); // 40 was the one dropped
  });

  it('always yields its moments in ascending order', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1e6 }), { maxLength: 200 }), (ts) => {
        const w = new WakeSchedule();
        ts.forEach((t) => w.add(t));
        const out: number[] = [];
        for (let next = w.next(); next !== undefined; next = w.next()) {
          out.push(next);
          w.popDue(next);
        }
        expect(out).toEqual([...new Set(ts)].sort((a, b) => a - b));
      }),
    );
  });
});
