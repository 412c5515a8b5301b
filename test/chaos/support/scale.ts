/**
 * CHAOS_SCALE: 1 (the default) runs the fault suite at its full sizes (2,000 posts, a 60 s
 * outage, 5,000 jobs in the retry storm); CI runs a fraction of it. Sizes and durations are
 * multiplied by it, never below the given floor, so a small scale keeps each scenario's shape.
 */
function readScale(): number {
  const raw = process.env.CHAOS_SCALE;
  if (raw === undefined || raw.trim() === '') return 1;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || n > 10) throw new Error(`CHAOS_SCALE must be a number in (0, 10], got "${raw}"`);
  return n;
}

export const CHAOS_SCALE = readScale();

/** `full` × CHAOS_SCALE, rounded, at least `floor`. */
export function scaled(full: number, floor = 1): number {
  return Math.max(floor, Math.round(full * CHAOS_SCALE));
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A uniform integer in [min, max]. */
export function between(min: number, max: number): number {
  return min + Math.floor(Math.random() * (max - min + 1));
}
