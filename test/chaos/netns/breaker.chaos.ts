import { ReceivedRequest } from '../../support/receiver';
import { waitUntil } from '../../support/poll';
import { CHAOS_SCALE, scaled } from '../support/scale';
import { Cluster, deliveryFigures } from './support/cluster';

/**
 * The circuit breaker across hosts: three Herald processes, each in a network namespace of its
 * own, deliver to one receiver that answers 503 for 30 s (× CHAOS_SCALE, at least 8 s) and then
 * recovers. Once an account's circuit is open, at most one half-open probe per cooldown reaches
 * the receiver for that account, whichever host sends it: counted at the receiver, by account
 * (the path) and by time, with the sender told apart by its source address.
 */
const COOLDOWN_MS = 2_000;
const ACCOUNTS = 4;
const DOWN_MS = scaled(30_000, 8_000);
/** Two clocks on one machine, and a request is stamped once its body arrived: a little slack. */
const SLACK_MS = 50;

const env = {
  WORKER_POLL_INTERVAL_MS: '200',
  WORKER_SWEEP_INTERVAL_MS: '2000',
  WORKER_LEASE_MS: '3000',
  CIRCUIT_COOLDOWN_MS: String(COOLDOWN_MS),
  CIRCUIT_DISABLE_THRESHOLD: '1000',
  // Retries are due at once: every host has work for the account at every moment, so only the
  // breaker stands between them and the receiver.
  RETRY_BASE_DELAY_MS: '10',
  RETRY_MAX_DELAY_MS: '20',
  RETRY_MAX_ATTEMPTS: '1000',
  HTTP_TOTAL_TIMEOUT_MS: '2000',
  WORKER_ATTEMPT_TIMEOUT_MS: '2000',
};

describe('the circuit breaker across three hosts', () => {
  let cluster: Cluster | null = null;
  afterEach(async () => {
    await cluster?.close();
    cluster = null;
  });

  it('lets one half-open probe per cooldown per account through, whichever host sends it, while a receiver is down', async () => {
    const c = (cluster = await Cluster.create(3));
    let downUntil = 0;
    const delivered = new Set<ReceivedRequest>();
    const receiver = await c.receiver((request) => {
      const now = request.receivedAt.getTime();
      if (downUntil === 0) downUntil = now + DOWN_MS;
      if (now < downUntil) return 503;
      delivered.add(request);
      return 200;
    });
    const hosts = await Promise.all([1, 2, 3].map((i) => c.start(i, env)));
    const ids = await c.accounts(hosts[0], receiver, ACCOUNTS);
    const posts = scaled(50, 10);
    const total = ACCOUNTS * posts;
    await c.queue(hosts[0], ids, posts);

    await waitUntil(async () => (await c.jobStates()).succeeded === total, DOWN_MS + 120_000, `all ${total} jobs to succeed`);

    const lines: string[] = [];
    const violations: string[] = [];
    let totalProbes = 0;
    for (let i = 0; i < ACCOUNTS; i++) {
      const during = receiver.requests.filter((r) => r.path === `/hook/${i}` && r.receivedAt.getTime() < downUntil);
      const times = during.map((r) => r.receivedAt.getTime());
      // First a burst of failures, up to the account's in-flight cap at once and a few more before
      // the failure that opens the circuit is recorded; after it, only probes.
      const opened = times.findIndex((t, k) => k > 0 && t - times[k - 1] >= COOLDOWN_MS - SLACK_MS);
      const burst = opened === -1 ? times.length : opened;
      const probes = opened === -1 ? [] : during.slice(opened);
      const gaps = probes.slice(1).map((p, k) => p.receivedAt.getTime() - probes[k].receivedAt.getTime());
      for (const gap of gaps) if (gap < COOLDOWN_MS - SLACK_MS) violations.push(`account ${i}: two probes ${gap} ms apart`);
      // In every cooldown-long window: at most one probe.
      const perWindow = new Map<number, number>();
      for (const p of probes) {
        const w = Math.floor((p.receivedAt.getTime() - probes[0].receivedAt.getTime()) / COOLDOWN_MS);
        perWindow.set(w, (perWindow.get(w) ?? 0) + 1);
      }
      const bySender = [1, 2, 3].map((h) => probes.filter((p) => c.sender(p) === h).length);
      totalProbes += probes.length;
      lines.push(
        `  account ${i}: ${during.length} requests while down: burst ${burst}, then ${probes.length} probes (hosts 1/2/3: ${bySender.join('/')}), ` +
          `gaps ${gaps.length ? `${Math.min(...gaps)}–${Math.max(...gaps)} ms` : 'n/a'}, most probes in one ${COOLDOWN_MS} ms window: ${Math.max(0, ...perWindow.values())}`,
      );
      if (probes.length === 0) violations.push(`account ${i}: no probe at all while down`);
      // A probe every cooldown (+ up to a poll interval and the attempt itself): at least half as many as windows.
      const windows = Math.floor((downUntil - (probes[0]?.receivedAt.getTime() ?? downUntil)) / COOLDOWN_MS);
      if (probes.length > windows + 1) violations.push(`account ${i}: ${probes.length} probes in ${windows + 1} windows`);
      if (probes.length < Math.floor(windows / 2)) violations.push(`account ${i}: only ${probes.length} probes in ${windows} windows`);
    }
    const probeHosts = new Set(receiver.requests.filter((r) => r.receivedAt.getTime() < downUntil).map((r) => c.sender(r)));
    const figures = await deliveryFigures(c, [...delivered]);
    console.log(
      [
        `circuit breaker across 3 hosts (CHAOS_SCALE=${CHAOS_SCALE}): receiver down ${(DOWN_MS / 1000).toFixed(0)} s, cooldown ${COOLDOWN_MS} ms, ${ACCOUNTS} accounts, ${total} jobs`,
        ...lines,
        `  ${totalProbes} probes in all, from ${probeHosts.size} hosts; after recovery: ${figures.requests} deliveries, ${figures.duplicates} duplicates, ${figures.dropped.length} dropped`,
      ].join('\n'),
    );
    expect(violations).toEqual([]);
    expect(figures.dropped).toEqual([]);
    expect(figures.wrongKey).toBe(0);
    expect(hosts.every((h) => h.running)).toBe(true);
  });
});
