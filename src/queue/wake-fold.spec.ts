import { WakeFold } from './wake-fold';

describe('WakeFold', () => {
  it('sends the first addition at once, then at most one per window with the earliest run_at', () => {
    const f = new WakeFold(10);
    expect(f.add(5_000, 1_000)).toBe(5_000);
    expect(f.flushAt).toBeNull();
    expect(f.add(7_000, 1_002)).toBeNull();
    expect(f.add(6_000, 1_004)).toBeNull();
    expect(f.add(9_000, 1_009)).toBeNull();
    expect(f.flushAt).toBe(1_010);
    expect(f.flush(1_010)).toBe(6_000);
    expect(f.flushAt).toBeNull();
    // Within the window that flush opened: folded again.
    expect(f.add(8_000, 1_015)).toBeNull();
    expect(f.flushAt).toBe(1_020);
    expect(f.flush(1_021)).toBe(8_000);
  });

  it('after a quiet window, an addition goes out at once again', () => {
    const f = new WakeFold(10);
    expect(f.add(1, 0)).toBe(1);
    expect(f.add(2, 10)).toBe(2);
    expect(f.add(3, 25)).toBe(3);
    expect(f.flush(40)).toBeNull();
  });

  it('a flush with nothing folded sends nothing and does not hold the next addition back', () => {
    const f = new WakeFold(10);
    expect(f.flush(0)).toBeNull();
    expect(f.add(4, 1)).toBe(4);
  });
});
