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

  it('waits for a moment further away than a timer can hold (2^31 - 1 ms, ~24.8 days) without waking early', () => {
    // Node runs a longer setTimeout after 1 ms: a post scheduled months ahead woke the worker
    // every millisecond (a TimeoutOverflowWarning in the test log was the trace).
    const wakes: number[] = [];
    const timer = new WakeTimer(() => wakes.push(Date.now()));
    const day = 86_400_000;
    timer.at(1_000_000 + 60 * day);
    jest.advanceTimersByTime(30 * day);
    expect(wakes).toEqual([]);
    expect(timer.state).toBe('armed');
    jest.advanceTimersByTime(30 * day);
    expect(wakes).toEqual([1_000_000 + 60 * day]);
    expect(timer.state).toBe('idle');
  });
});
