import * as os from 'node:os';
import * as path from 'node:path';
import { createTestDatabase, withClient } from '../support/database';
import { ROOT } from '../support/process';
import { Receiver, startReceiver } from '../support/receiver';
import { waitUntil } from '../support/poll';
import { CHAOS_KEY, Fleet, webhookAccounts } from './support/herald';
import { perSecond, plotRequestsPerSecond } from './support/plot';
import { CHAOS_SCALE, between, scaled } from './support/scale';
import { api } from '../support/service';

/**
 * The shape of a retry storm: many jobs to one receiver that answers 503 for a while, then
 * recovers. The receiver records every request; requests per second after the recovery should
 * not come as a wave. Run with full jitter (the default) and with RETRY_JITTER=none for
 * comparison; the circuit breaker and the slow start after recovery (WORKER_SLOW_START_MS and
 * WORKER_SLOW_START_RATE, the defaults written out: docs/delivery.md) are on in both; a third
 * run, full jitter without the slow start, shows what the ramp changes and costs. Prints the peak-to-mean ratio of requests per
 * second from the recovery to the last request, and draws the runs (docs/images/retry-storm.png
 * at full scale, a temporary file otherwise).
 */

const JOBS = scaled(5_000, 1_000);
const OUTAGE_MS = scaled(60_000, 15_000);
const ACCOUNTS = 50;
const SETTINGS = {
  RETRY_BASE_DELAY_MS: '1000',
  RETRY_MAX_DELAY_MS: '30000',
  RETRY_MAX_ATTEMPTS: '1000',
  CIRCUIT_COOLDOWN_MS: '10000',
  CIRCUIT_DISABLE_THRESHOLD: '100000',
  WORKER_POLL_INTERVAL_MS: '1000',
  // The defaults, named here because the figures depend on them: an account whose circuit
  // closes ramps from 1 to 5 in flight and from 10 to 20 requests a second over 10 s (its 100
  // jobs at full scale go out over 7.3 s of the ramp; docs/delivery.md).
  WORKER_SLOW_START_MS: '10000',
  WORKER_SLOW_START_RATE: '20',
};

interface Storm {
  jitter: string;
  slowStartMs: number;
  times: number[];
  firstAt: number;
  recoveredAt: number;
  peak: number;
  mean: number;
  ratio: number;
  failed: number;
  drainS: number;
}

describe('retry storm: a receiver down, then back', () => {
  const fleet = new Fleet();
  let receiver: Receiver | null = null;
  afterEach(async () => {
    await fleet.stopAll();
    await receiver?.close();
  });

  async function storm(jitter: 'full' | 'none', slowStartMs = Number(SETTINGS.WORKER_SLOW_START_MS)): Promise<Storm> {
    const { url } = await createTestDatabase();
    let firstAt = 0;
    receiver = await startReceiver(() => {
      const now = Date.now();
      if (firstAt === 0) firstAt = now;
      return now - firstAt < OUTAGE_MS ? 503 : { status: 200, delayMs: between(2, 10) };
    });
    // Everything queued before any worker runs: 5,000 jobs due at once.
    const intake = await fleet.start(url, { ...SETTINGS, WORKER_ENABLED: 'false' });
    const accounts = await webhookAccounts(intake, [receiver.urlFor('/hook')], ACCOUNTS);
    const perPost = 10;
    for (let i = 0; i < JOBS / perPost; i++) {
      const targets = Array.from({ length: perPost }, (_, k) => ({ accountId: accounts[(i * perPost + k) % ACCOUNTS] }));
      const res = await api(intake, CHAOS_KEY, 'POST', '/v1/posts', { text: `storm ${i}`, targets });
      expect(res.status).toBe(201);
    }
    await fleet.start(url, { ...SETTINGS, RETRY_JITTER: jitter, WORKER_SLOW_START_MS: String(slowStartMs) });
    await waitUntil(
      () => withClient(url, async (db) => (await db.query(`SELECT 1 FROM jobs WHERE status <> 'succeeded' LIMIT 1`)).rows.length === 0),
      OUTAGE_MS + 180_000,
      `all ${JOBS} jobs delivered after the outage`,
    );
    const times = receiver.requests.map((r) => r.receivedAt.getTime());
    const recoveredAt = firstAt + OUTAGE_MS;
    const after = perSecond(times, recoveredAt);
    const total = after.reduce((a, b) => a + b, 0);
    const peak = Math.max(...after);
    const mean = total / after.length;
    const failed = times.filter((t) => t < recoveredAt).length;
    await receiver.close();
    receiver = null;
    await fleet.stopAll();
    return { jitter, slowStartMs, times, firstAt, recoveredAt, peak, mean, ratio: peak / mean, failed, drainS: after.length };
  }

  it(`${JOBS} jobs to one receiver answering 503 for ${OUTAGE_MS / 1000} s: requests after the recovery come without a wave`, async () => {
    const full = await storm('full');
    const none = await storm('none');
    // For comparison only (no bound): what the slow start changes, and what it costs the drain.
    const noRamp = await storm('full', 0);
    const file = CHAOS_SCALE === 1 ? path.join(ROOT, 'docs/images/retry-storm.png') : path.join(os.tmpdir(), 'herald-retry-storm.png');
    await plotRequestsPerSecond(
      file,
      `Retry storm: ${JOBS} jobs over ${ACCOUNTS} accounts, one receiver answering 503 for ${OUTAGE_MS / 1000} s`,
      [
        {
          label: `full jitter (default): peak/mean after recovery ${full.ratio.toFixed(2)}`,
          color: '#1f77b4',
          values: perSecond(full.times, full.firstAt),
        },
        { label: `no jitter (RETRY_JITTER=none): ${none.ratio.toFixed(2)}`, color: '#d62728', values: perSecond(none.times, none.firstAt) },
        {
          label: `full jitter, no slow start (WORKER_SLOW_START_MS=0): ${noRamp.ratio.toFixed(2)}`,
          color: '#2ca02c',
          values: perSecond(noRamp.times, noRamp.firstAt),
        },
      ],
      OUTAGE_MS / 1000,
      'receiver recovers',
    );
    const line = (s: Storm) =>
      `  jitter ${s.jitter}, slow start ${s.slowStartMs / 1000} s: ${s.failed} requests refused during the outage (${(s.failed / (OUTAGE_MS / 1000)).toFixed(1)}/s), after recovery ${s.times.length - s.failed} requests over ${s.drainS} s: peak ${s.peak}/s, mean ${s.mean.toFixed(1)}/s, peak-to-mean ${s.ratio.toFixed(2)}`;
    console.log(
      [
        `retry storm: ${JOBS} jobs, ${ACCOUNTS} accounts, one receiver, 503 for ${OUTAGE_MS / 1000} s, circuit breaker on (5 failures, 10 s cooldown), slow start ${Number(SETTINGS.WORKER_SLOW_START_MS) / 1000} s (rate ${SETTINGS.WORKER_SLOW_START_RATE}/s at its end), backoff 1 s doubling to 30 s`,
        line(full),
        line(none),
        line(noRamp),
        `  the slow start's cost to the drain: ${full.drainS - noRamp.drainS} s (${full.drainS} s with it, ${noRamp.drainS} s without)`,
        `  plot: ${file}`,
      ].join('\n'),
    );
    // The promise is for the full storm (60 s: several cooldowns mix the accounts' probes); a
    // smaller scale has one cooldown inside its outage and a drain of ~15–20 one-second buckets
    // whose first seconds are the wait for the cooldowns (no close before them), so its ratio runs
    // higher, and it keeps a looser bound.
    // History at CHAOS_SCALE=0.2 (full jitter and slow start / no jitter / no slow start): before
    // any slow start, full jitter 3.60–4.44, no jitter 5.41–7.54; with the in-flight ramp alone,
    // on a quiet machine, 4.26 / 7.36 / 5.12, then (faster engine) 5.16 / 7.00 / 3.40 and
    // 5.43 / 7.00 / 3.30: 7.00 is every request in one second, the wave, which jitter on the
    // cooldowns only moved. With the rate ramp from 0 (2026-12-02): 3.12 / 3.58 / 4.76 and
    // 3.23 / 3.40 / 3.06; from half the rate (kept): 2.88 / 4.02 / 6.10, then 3.69 / 4.25 / 3.88
    // in a whole CI run. The ramp bounds each account's request rate however fast the machine
    // is, so even without jitter there is no wave any more: there every circuit closes at the
    // same poll tick, at most 50 × 11 requests go out in the first second of the ramp and the
    // drain is ~9 s (most of it the wait for the cooldown), so its ratio stays under ~5 by
    // design; bound 6, which the in-flight ramp alone failed every run (7.00). Full jitter:
    // bound 5. Full jitter is no longer compared with no jitter: with every account paced, the
    // two are within each other's noise. docs/fault-suite.md has the figures at full scale.
    if (CHAOS_SCALE >= 1) expect(full.ratio).toBeLessThanOrEqual(3);
    else {
      expect(full.ratio).toBeLessThanOrEqual(5);
      expect(none.ratio).toBeLessThanOrEqual(6);
    }
  });
});
