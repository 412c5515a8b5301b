/**
 * "No regression in any figure the bench prints": each run records its headline figures in
 * bench/results/latest.json, and compares them with a baseline (BENCH_BASELINE, default
 * bench/results/baseline.json: the figures of an earlier run on the same machine) when there is one.
 *
 * A figure is a regression when it is worse than the baseline's by more than the machine's noise
 * (BENCH_NOISE, a fraction; 0.25 by default: on this shared two-core VM the same figure moves by
 * 30 % between runs at different loads, less for same-run ratios). Pure: the bench does the I/O.
 */

/** Which way is better: a rate wants to be higher, a cost lower. */
export type Better = 'higher' | 'lower';

export interface Figure {
  /** Stable key, e.g. `throughput.ratio`. */
  key: string;
  /** What it is, for the printed line. */
  what: string;
  value: number;
  better: Better;
  /** Printed with this many decimals. */
  digits?: number;
}

export interface Comparison {
  key: string;
  what: string;
  before: number;
  after: number;
  /** after / before. */
  ratio: number;
  /** Worse than before by more than the noise. */
  regressed: boolean;
  /** Better than before by more than the noise. */
  improved: boolean;
}

/** Compares the figures present in both runs; figures only one run has are left out. */
export function compareFigures(current: Figure[], baseline: Figure[], noise: number): Comparison[] {
  const before = new Map(baseline.map((f) => [f.key, f]));
  const out: Comparison[] = [];
  for (const f of current) {
    const b = before.get(f.key);
    if (!b || !Number.isFinite(b.value) || !Number.isFinite(f.value) || b.value === 0) continue;
    const ratio = f.value / b.value;
    const worse = f.better === 'higher' ? ratio < 1 - noise : ratio > 1 + noise;
    const better = f.better === 'higher' ? ratio > 1 + noise : ratio < 1 - noise;
    out.push({ key: f.key, what: f.what, before: b.value, after: f.value, ratio, regressed: worse, improved: better });
  }
  return out;
}
