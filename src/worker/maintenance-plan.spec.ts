import { nextMaintenanceMs } from './maintenance-plan';

const NOW = new Date('2026-12-06T12:00:00.000Z');
const at = (ms: number) => new Date(NOW.getTime() + ms);
const idle = { now: NOW, dueWaiting: false, leaseExpiresAt: null, publishBy: null };

describe('the next queue maintenance', () => {
  it('is a safety sweep away when the queue names no moment', () => {
    expect(nextMaintenanceMs({ busy: false, listening: true, moments: idle }, 1000, 60_000)).toBe(60_000);
  });

  it('comes just after the earliest lease that may expire or the earliest publishBy', () => {
    const moments = { ...idle, leaseExpiresAt: at(12_000), publishBy: at(30_000) };
    expect(nextMaintenanceMs({ busy: false, listening: true, moments }, 1000, 60_000)).toBe(12_001);
    expect(nextMaintenanceMs({ busy: false, listening: true, moments: { ...moments, publishBy: at(5_000) } }, 1000, 60_000)).toBe(5_001);
    // A moment further than the sweep: the sweep comes first.
    expect(nextMaintenanceMs({ busy: false, listening: true, moments: { ...idle, publishBy: at(3_600_000) } }, 1000, 60_000)).toBe(60_000);
  });

  it('runs at once for a moment already past', () => {
    expect(nextMaintenanceMs({ busy: false, listening: true, moments: { ...idle, leaseExpiresAt: at(-5) } }, 1000, 60_000)).toBe(0);
  });

  it('polls while at work, while due jobs wait unclaimed, without a LISTEN connection, or without the moments', () => {
    expect(nextMaintenanceMs({ busy: true, listening: true, moments: idle }, 1000, 60_000)).toBe(1000);
    expect(nextMaintenanceMs({ busy: false, listening: true, moments: { ...idle, dueWaiting: true } }, 1000, 60_000)).toBe(1000);
    expect(nextMaintenanceMs({ busy: false, listening: false, moments: idle }, 1000, 60_000)).toBe(1000);
    expect(nextMaintenanceMs({ busy: false, listening: true, moments: null }, 1000, 60_000)).toBe(1000);
    // A sweep set shorter than the poll interval (tests) wins.
    expect(nextMaintenanceMs({ busy: true, listening: true, moments: idle }, 1000, 200)).toBe(200);
  });
});
