import { WakeTimer } from './wake-timer';

describe('WakeTimer', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('wakes at once for a moment already due, and at the earliest known moment otherwise', () => {
    const wakes: number[] = [];
    const timer = new WakeTimer(() => wakes.push(Date.now()));
    timer.at(Date.now() - 5);
    expect(wakes).toEqual([1_000_000]);
    expect(timer.state).toBe('idle');
    timer.at(1_000_500);
    timer.at(1_000_200); // earlier: re-arms
    timer.at(1_000_900); // later: only remembered
    expect(timer.state).toBe('armed');
    jest.advanceTimersByTime(1_000);
    expect(wakes).toEqual([1_000_000, 1_000_200, 1_000_500, 1_000_900]);
    expect(timer.state).toBe('idle');
  });

  it('does nothing once stopped', () => {
    const wakes: number[] = [];
    const timer = new WakeTimer(() => wakes.push(Date.now()));
    timer.at(1_000_100);
    timer.stop();
    timer.at(1_000_050);
    timer.at(999_000);
    jest.advanceTimersByTime(1_000);
    expect(wakes).toEqual([]);
    expect(timer.state).toBe('stopped');
  });
});
