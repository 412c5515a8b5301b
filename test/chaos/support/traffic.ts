import type { ServiceProcess } from '../../support/process';

/** Every client loop still running: a test that fails half-way must not leave one spinning. */
const running = new Set<() => Promise<void>>();

/** Stops every posting and probing loop (call it in afterEach). */
export async function stopTraffic(): Promise<void> {
  await Promise.all([...running].map((stop) => stop()));
}

/** One POST /v1/posts of a client that keeps posting: its answer, how long it took, the jobs it created. */
export interface PostTry {
  at: number;
  status: number | 'no answer';
  ms: number;
  jobIds: string[];
}

/**
 * Posts one post to `accountId` every `everyMs` until stopped; each request may take at most
 * 15 s (a hang shows as 'no answer').
 */
export function keepPosting(
  service: ServiceProcess,
  key: string,
  accountIds: string[],
  everyMs: number,
): { tries: PostTry[]; accepted(): number; stop(): Promise<void> } {
  const tries: PostTry[] = [];
  let active = true;
  let n = 0;
  const loop = (async () => {
    while (active) {
      const at = Date.now();
      const accountId = accountIds[n % accountIds.length];
      try {
        const res = await fetch(`${service.url}/v1/posts`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ text: `through the outage ${++n}`, targets: [{ accountId }] }),
          signal: AbortSignal.timeout(15_000),
        });
        const body = (await res.json()) as { jobs?: { id: string }[] };
        tries.push({ at, status: res.status, ms: Date.now() - at, jobIds: res.status === 201 ? body.jobs!.map((j) => j.id) : [] });
      } catch {
        tries.push({ at, status: 'no answer', ms: Date.now() - at, jobIds: [] });
      }
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  const stop = async () => {
    active = false;
    running.delete(stop);
    await loop;
  };
  running.add(stop);
  return { tries, accepted: () => tries.filter((t) => t.status === 201).length, stop };
}

/** Probes /health/ready every 100 ms; `seen` is the sequence of distinct answers (0: no answer). */
export function watchReadiness(service: ServiceProcess): { seen: number[]; stop(): Promise<void> } {
  const seen: number[] = [];
  let active = true;
  const loop = (async () => {
    while (active) {
      try {
        const res = await fetch(`${service.url}/health/ready`, { signal: AbortSignal.timeout(5_000) });
        if (seen[seen.length - 1] !== res.status) seen.push(res.status);
      } catch {
        if (seen[seen.length - 1] !== 0) seen.push(0);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const stop = async () => {
    active = false;
    running.delete(stop);
    await loop;
  };
  running.add(stop);
  return { seen, stop };
}

/** "12 × 201, 7 × 503" */
export function statusCounts(tries: PostTry[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const t of tries) counts.set(String(t.status), (counts.get(String(t.status)) ?? 0) + 1);
  return counts;
}
