import fc from 'fast-check';
import {
  BreakerConfig,
  Circuit,
  CLOSED_CIRCUIT,
  DEFAULT_BREAKER,
  gate,
  jitteredCooldownMs,
  recordOutcome,
  startProbe,
} from './circuit-breaker';
import { ErrorClass } from './error-class';

const NOW = new Date(Date.UTC(2025, 5, 1, 12, 0, 0));
const COOLDOWN = DEFAULT_BREAKER.cooldownMs;

function at(offsetMs: number): Date {
  return new Date(NOW.getTime() + offsetMs);
}

function circuit(overrides: Partial<Circuit> = {}): Circuit {
  return { ...CLOSED_CIRCUIT, ...overrides };
}

function openCircuit(overrides: Partial<Circuit> = {}): Circuit {
  return circuit({ state: 'open', openUntil: at(COOLDOWN), consecutiveFailures: 5, ...overrides });
}

function halfOpenCircuit(overrides: Partial<Circuit> = {}): Circuit {
  return circuit({ state: 'half_open', openUntil: at(-1), consecutiveFailures: 5, ...overrides });
}

/** Applies outcomes in the order attempts finish, all at NOW. */
function replay(start: Circuit, outcomes: ErrorClass[], cfg: BreakerConfig = DEFAULT_BREAKER): Circuit {
  return outcomes.reduce((c, cls) => recordOutcome(c, cls, NOW, cfg).next, start);
}

const NON_TRANSIENT_FAILURES = ['auth', 'permanent', 'poison'] as const;

describe('DEFAULT_BREAKER', () => {
  it('has the documented defaults: open after 5, cool down 30 s, disable after 50', () => {
    expect(DEFAULT_BREAKER).toEqual({ failureThreshold: 5, cooldownMs: 30_000, disableThreshold: 50 });
  });
});

describe('gate', () => {
  it('allows attempts while closed', () => {
    expect(gate(circuit(), NOW)).toBe('allow');
  });

  it('defers while open and cooling down', () => {
    expect(gate(openCircuit({ openUntil: at(1) }), NOW)).toBe('defer');
  });

  it('offers a probe once the cooldown ends, exactly at openUntil', () => {
    expect(gate(openCircuit({ openUntil: at(0) }), NOW)).toBe('probe');
    expect(gate(openCircuit({ openUntil: at(-60_000) }), NOW)).toBe('probe');
  });

  it('offers a probe for an open circuit without openUntil so it cannot stay open forever', () => {
    expect(gate(openCircuit({ openUntil: null }), NOW)).toBe('probe');
  });

  it('defers while half-open because the single probe is already out', () => {
    expect(gate(halfOpenCircuit({ openUntil: at(60_000) }), NOW)).toBe('defer');
  });

  it("offers a new probe when the half-open probe's deadline passed (its worker died)", () => {
    expect(gate(halfOpenCircuit({ openUntil: at(-1) }), NOW)).toBe('probe');
  });
});

describe('startProbe', () => {
  it('moves an open circuit to half-open until the probe deadline, keeping its count', () => {
    const c = openCircuit({ openUntil: at(-1), consecutiveFailures: 7 });
    expect(startProbe(c, at(60_000))).toEqual({ ...c, state: 'half_open', openUntil: at(60_000) });
  });

  it('leaves a closed circuit as it is', () => {
    expect(startProbe(circuit({ consecutiveFailures: 2 }), at(60_000))).toEqual(circuit({ consecutiveFailures: 2 }));
  });

  it('re-arms a half-open circuit whose probe was lost', () => {
    expect(startProbe(halfOpenCircuit({ openUntil: at(-1) }), at(60_000))).toEqual(halfOpenCircuit({ openUntil: at(60_000) }));
  });

  it('does not mutate its input', () => {
    const c = Object.freeze(openCircuit());
    expect(() => startProbe(c, at(60_000))).not.toThrow();
    expect(c.state).toBe('open');
  });

  it('lets exactly one probe through per cooldown', () => {
    const cooled = openCircuit({ openUntil: at(-1) });
    expect(gate(cooled, NOW)).toBe('probe');
    const claimed = startProbe(cooled, at(60_000));
    expect(gate(claimed, NOW)).toBe('defer');
  });
});

describe('recordOutcome', () => {
  describe('success', () => {
    it.each([
      ['closed', circuit({ consecutiveFailures: 4 })],
      ['open (an in-flight attempt got through)', openCircuit()],
      ['half_open (the probe succeeded)', halfOpenCircuit()],
    ])('closes the circuit and resets the count from %s', (_name, c) => {
      expect(recordOutcome(c, 'success', NOW, DEFAULT_BREAKER)).toEqual({
        next: { state: 'closed', openUntil: null, consecutiveFailures: 0 },
        opened: false,
        disable: false,
      });
    });
  });

  describe('transient', () => {
    it('counts a failure while closed below the threshold', () => {
      expect(recordOutcome(circuit({ consecutiveFailures: 2 }), 'transient', NOW, DEFAULT_BREAKER)).toEqual({
        next: circuit({ consecutiveFailures: 3 }),
        opened: false,
        disable: false,
      });
    });

    it('opens on the fifth consecutive failure, for a cooldown starting now', () => {
      expect(recordOutcome(circuit({ consecutiveFailures: 4 }), 'transient', NOW, DEFAULT_BREAKER)).toEqual({
        next: { state: 'open', openUntil: at(COOLDOWN), consecutiveFailures: 5 },
        opened: true,
        disable: false,
      });
    });

    it('opens on the fifth failure, not the fourth', () => {
      expect(replay(CLOSED_CIRCUIT, Array<ErrorClass>(4).fill('transient')).state).toBe('closed');
      expect(replay(CLOSED_CIRCUIT, Array<ErrorClass>(5).fill('transient')).state).toBe('open');
    });

    it('starts counting again after any success', () => {
      const c = replay(CLOSED_CIRCUIT, [
        'transient',
        'transient',
        'transient',
        'transient',
        'success',
        'transient',
        'transient',
        'transient',
        'transient',
      ]);
      expect(c).toEqual(circuit({ consecutiveFailures: 4 }));
    });

    it('counts in-flight failures while open without moving the cooldown or reporting opened again', () => {
      const c = openCircuit({ openUntil: at(10_000), consecutiveFailures: 6 });
      expect(recordOutcome(c, 'transient', at(5_000), DEFAULT_BREAKER)).toEqual({
        next: { ...c, consecutiveFailures: 7 },
        opened: false,
        disable: false,
      });
    });

    it('re-opens for a fresh cooldown when the probe fails', () => {
      const probing = halfOpenCircuit({ openUntil: at(-5_000), consecutiveFailures: 5 });
      expect(recordOutcome(probing, 'transient', NOW, DEFAULT_BREAKER)).toEqual({
        next: { state: 'open', openUntil: at(COOLDOWN), consecutiveFailures: 6 },
        opened: true,
        disable: false,
      });
    });

    it('uses the configured threshold and cooldown', () => {
      const cfg: BreakerConfig = { failureThreshold: 1, cooldownMs: 1_000, disableThreshold: 3 };
      expect(recordOutcome(CLOSED_CIRCUIT, 'transient', NOW, cfg)).toEqual({
        next: { state: 'open', openUntil: at(1_000), consecutiveFailures: 1 },
        opened: true,
        disable: false,
      });
    });

    it('disables the account at the 50th consecutive failure', () => {
      expect(recordOutcome(openCircuit({ consecutiveFailures: 48 }), 'transient', NOW, DEFAULT_BREAKER).disable).toBe(false);
      expect(recordOutcome(openCircuit({ consecutiveFailures: 49 }), 'transient', NOW, DEFAULT_BREAKER).disable).toBe(true);
      expect(recordOutcome(halfOpenCircuit({ consecutiveFailures: 49 }), 'transient', NOW, DEFAULT_BREAKER)).toEqual({
        next: { state: 'open', openUntil: at(COOLDOWN), consecutiveFailures: 50 },
        opened: true,
        disable: true,
      });
    });

    it('keeps asking to disable past the threshold (the caller disables idempotently)', () => {
      expect(recordOutcome(openCircuit({ consecutiveFailures: 60 }), 'transient', NOW, DEFAULT_BREAKER).disable).toBe(true);
    });

    it('reaches disable through the real sequence of opens and failed probes', () => {
      let c: Circuit = CLOSED_CIRCUIT;
      let disabledAt: number | null = null;
      let opens = 0;
      for (let i = 1; i <= 50; i++) {
        if (gate(c, NOW) === 'probe') c = startProbe(c, at(60_000));
        const fb = recordOutcome(c, 'transient', NOW, DEFAULT_BREAKER);
        if (fb.opened) opens += 1;
        if (fb.disable && disabledAt === null) disabledAt = i;
        c = { ...fb.next, openUntil: fb.next.openUntil === null ? null : at(-1) }; // let each cooldown pass
      }
      expect(disabledAt).toBe(50);
      expect(opens).toBe(46); // once at the 5th failure, then each of the 45 failed probes
    });

    it('treats a corrupt count as zero', () => {
      expect(recordOutcome(circuit({ consecutiveFailures: Number.NaN }), 'transient', NOW, DEFAULT_BREAKER).next.consecutiveFailures).toBe(
        1,
      );
      expect(recordOutcome(circuit({ consecutiveFailures: -4 }), 'transient', NOW, DEFAULT_BREAKER).next.consecutiveFailures).toBe(1);
    });

    it('keeps openUntil a valid Date for an absurd cooldown', () => {
      const cfg: BreakerConfig = { ...DEFAULT_BREAKER, cooldownMs: Number.POSITIVE_INFINITY };
      const next = recordOutcome(circuit({ consecutiveFailures: 4 }), 'transient', NOW, cfg).next;
      expect(Number.isFinite(next.openUntil!.getTime())).toBe(true);
      const nan = recordOutcome(circuit({ consecutiveFailures: 4 }), 'transient', NOW, { ...DEFAULT_BREAKER, cooldownMs: Number.NaN });
      expect(nan.next.openUntil).toEqual(NOW);
    });
  });

  describe.each(NON_TRANSIENT_FAILURES)('%s (about credentials or payload, not receiver health)', (cls) => {
    it('leaves a closed circuit and its count unchanged', () => {
      const c = circuit({ consecutiveFailures: 3 });
      expect(recordOutcome(c, cls, NOW, DEFAULT_BREAKER)).toEqual({ next: c, opened: false, disable: false });
    });

    it('does not reset the count between transient failures', () => {
      expect(replay(CLOSED_CIRCUIT, ['transient', 'transient', cls, 'transient', 'transient', cls, 'transient'])).toEqual({
        state: 'open',
        openUntil: at(COOLDOWN),
        consecutiveFailures: 5,
      });
    });

    it('leaves an open circuit open with its cooldown', () => {
      const c = openCircuit({ consecutiveFailures: 49 });
      expect(recordOutcome(c, cls, NOW, DEFAULT_BREAKER)).toEqual({ next: c, opened: false, disable: false });
    });

    it('closes a half-open circuit: the probe got an answer from the receiver', () => {
      expect(recordOutcome(halfOpenCircuit({ consecutiveFailures: 30 }), cls, NOW, DEFAULT_BREAKER)).toEqual({
        next: { state: 'closed', openUntil: null, consecutiveFailures: 0 },
        opened: false,
        disable: false,
      });
    });
  });

  it('never mutates the circuit it is given', () => {
    const inputs = [circuit({ consecutiveFailures: 4 }), openCircuit(), halfOpenCircuit()].map((c) => Object.freeze(c));
    for (const c of inputs) {
      for (const cls of ['success', 'transient', 'auth', 'permanent', 'poison'] as const) {
        const before = { ...c };
        expect(() => recordOutcome(c, cls, NOW, DEFAULT_BREAKER)).not.toThrow();
        expect(c).toEqual(before);
      }
    }
  });

  describe('properties over runs of outcomes', () => {
    const step = fc.record({
      cls: fc.constantFrom<ErrorClass>('success', 'transient', 'transient', 'transient', 'auth', 'permanent', 'poison'),
      advanceMs: fc.integer({ min: 0, max: 40_000 }),
      tryProbe: fc.boolean(),
    });
    const config = fc.record({
      failureThreshold: fc.integer({ min: 1, max: 8 }),
      cooldownMs: fc.integer({ min: 0, max: 60_000 }),
      disableThreshold: fc.integer({ min: 1, max: 20 }),
    });

    it('keeps the circuit consistent with the documented rules whatever the order of outcomes', () => {
      fc.assert(
        fc.property(config, fc.array(step, { maxLength: 80 }), (cfg, steps) => {
          let c: Circuit = CLOSED_CIRCUIT;
          let now = NOW.getTime();
          for (const s of steps) {
            now += s.advanceMs;
            const g = gate(c, new Date(now));
            if (g === 'probe' && s.tryProbe) c = startProbe(c, new Date(now + 60_000));
            const before = c;
            const fb = recordOutcome(before, s.cls, new Date(now), cfg);
            c = fb.next;

            // The count follows the outcomes: +1 per transient, 0 on success or an answered probe.
            const reset = s.cls === 'success' || (s.cls !== 'transient' && before.state === 'half_open');
            const expected = s.cls === 'transient' ? before.consecutiveFailures + 1 : reset ? 0 : before.consecutiveFailures;
            expect(c.consecutiveFailures).toBe(expected);

            expect(fb.disable).toBe(s.cls === 'transient' && c.consecutiveFailures >= cfg.disableThreshold);
            expect(fb.opened).toBe(c.state === 'open' && before.state !== 'open');
            if (c.state === 'closed') {
              expect(c.openUntil).toBeNull();
              expect(c.consecutiveFailures).toBeLessThan(cfg.failureThreshold);
            }
            if (c.state === 'open') expect(c.openUntil).not.toBeNull();
            if (fb.opened) expect(c.openUntil!.getTime()).toBe(now + cfg.cooldownMs);
            if (before.state === 'open' && c.state === 'open') expect(c.openUntil).toEqual(before.openUntil);
          }
        }),
        { numRuns: 500 },
      );
    });
  });
});

describe('jitteredCooldownMs', () => {
  it('is the exact cooldown without jitter, and at most half of it more with', () => {
    expect(jitteredCooldownMs(10_000, () => 0)).toBe(10_000);
    expect(jitteredCooldownMs(10_000, () => 0.5)).toBe(12_500);
    expect(jitteredCooldownMs(10_000, () => 0.999999)).toBe(14_999);
  });
  it('clamps a misbehaving random source into the window', () => {
    for (const r of [1, 2, -1, Number.NaN]) {
      const ms = jitteredCooldownMs(10_000, () => r);
      expect(ms).toBeGreaterThanOrEqual(10_000);
      expect(ms).toBeLessThan(15_000);
    }
    expect(jitteredCooldownMs(0, () => 0.7)).toBe(0);
  });
  it('spreads the cooldowns of circuits that open at the same instant', () => {
    const now = new Date('2026-12-01T00:00:00Z');
    const cfg: BreakerConfig = { failureThreshold: 1, cooldownMs: 10_000, disableThreshold: 100 };
    const ends = new Set<number>();
    let seed = 1;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let i = 0; i < 50; i++) {
      const step = recordOutcome(CLOSED_CIRCUIT, 'transient', now, cfg, random);
      expect(step.opened).toBe(true);
      const ms = step.next.openUntil!.getTime() - now.getTime();
      expect(ms).toBeGreaterThanOrEqual(10_000);
      expect(ms).toBeLessThan(15_000);
      ends.add(Math.floor(ms / 1000));
    }
    expect(ends.size).toBe(5); // every second of the window is used
  });
});
