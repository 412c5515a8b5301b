import { WakeSchedule } from './wake-schedule';

/**
 * One timer for the moments this worker knows jobs become due (NOTIFY payloads, retries it
 * scheduled itself, the idle check of the next due job), always set for the earliest of them.
 *
 * Modes:
 * - `idle`: no moment ahead, no timer;
 * - `armed`: a timer is set for the earliest moment; an earlier one re-arms it, a later one
 *   only joins the schedule;
 * - `stopped` (shutdown): nothing is armed any more.
 */
export type WakeTimerMode = 'idle' | 'armed' | 'stopped';

/**
 * The longest delay a Node timer holds (2^31 - 1 ms, ~24.8 days): a longer one fires after 1 ms
 * (with a TimeoutOverflowWarning). A moment further away is waited for in steps of this.
 */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class WakeTimer {
  private readonly times = new WakeSchedule();
  private timer: NodeJS.Timeout | null = null;
  private due = 0;
  private mode: WakeTimerMode = 'idle';

  constructor(
    private readonly wake: () => void,
    private readonly now: () => number = Date.now,
  ) {}

  get state(): WakeTimerMode {
    return this.mode;
  }

  /** Be awake at `at` (epoch ms); a moment already due wakes at once. */
  at(at: number): void {
    if (this.mode === 'stopped') return;
    if (at - this.now() <= 1) {
      this.wake();
      return;
    }
    this.times.add(at);
    this.arm();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.mode = 'stopped';
  }

  private arm(): void {
    const next = this.times.next();
    if (next === undefined || this.mode === 'stopped') {
      if (this.mode === 'armed' && next === undefined) this.mode = 'idle';
      return;
    }
    if (this.timer && this.due <= next) return;
    if (this.timer) clearTimeout(this.timer);
    this.due = next;
    this.mode = 'armed';
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.mode = 'idle';
        // A moment past what one timer holds comes round in steps: not due yet, wait on.
        if (this.now() < this.due) {
          this.arm();
          return;
        }
        this.times.popDue(this.now());
        this.wake();
        this.arm();
      },
      Math.min(MAX_TIMER_MS, Math.max(0, next - this.now())),
    );
    this.timer.unref?.();
  }
}
