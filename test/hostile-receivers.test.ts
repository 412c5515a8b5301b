import type { AppBskyEmbedExternal, AppBskyFeedPost } from '@atproto/api';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { createTestDatabase } from './support/database';
import { Behaviour, endlessBody, enormousHeaders, garbage, RawServer, startRawServer, trickle } from './support/hostile';
import { freePort } from './support/net';
import { startPds, TestPdsHandle } from './support/pds';
import { ServiceProcess } from './support/process';
import { api } from './support/service';
import { waitUntil } from './support/poll';

/**
 * The fault suite's hostile receivers and pages: garbage answers, endless bodies, slow-loris
 * trickles, enormous headers, invalid Retry-After values, and link pages built to slow a parser
 * — all at once, against the real service process with its worker running. Each case is
 * classified as the attempt rows show.
 *
 * Responsiveness is judged by what Herald controls: how long its own work kept its event loop
 * busy. /metrics exports the worst such stretch since the previous scrape
 * (`herald_event_loop_blocked_max_seconds`: each 10 ms timer tick's lateness less the time the
 * kernel kept the thread waiting for a CPU). It is read once before the hostile posts (which
 * starts a fresh window) and once after every job had its first attempt, and must stay under
 * EVENT_LOOP_LIMIT_MS (200 ms). A parser or a body reader that runs synchronously for long shows
 * up there whatever the machine's load (checked by making the Open Graph parse spin for 300 ms
 * of CPU: it fails).
 *
 * Neither a round trip to /health/live measured from the test process nor the plain event-loop
 * delay (`herald_nodejs_eventloop_lag_max_seconds`) is that figure: both also hold the time the
 * operating system did not run the process, and on a loaded shared machine that alone reached
 * 115–259 ms for the round trip and 197 ms for the loop delay, while a CPU profile of Herald
 * showed no long stretch of its own. So the probe (in its own thread, every 20 ms) only checks
 * that every answer is a 200 within a generous bound (the service never stopped answering), and
 * both other figures are printed for the record.
 */

const API_KEY = 'hostile-suite-bootstrap-key-0001';
const METRICS_TOKEN = 'hostile-suite-metrics-token-0001';
/**
 * The longest the service's event loop may be blocked during the run. It was 100 ms until Herald
 * moved to Node 24 and ES-module NestJS: the whole suite in CI (three or four workers on two cores)
 * then measured 82, 90 and 117 ms here, and later a run failed at 313 ms. Logging each late tick's
 * schedstat counters in the service found the cause: a tick 358 ms late had waited 90 ms in the
 * run queue and run 2 ms, so the thread spent the rest asleep off the run queue (most likely for the
 * garbage collector's helper threads, which wait for a CPU on a loaded machine). The metric now
 * counts a stretch at most as long as the thread ran in it (src/metrics/event-loop-blocking.ts),
 * and 200 ms still fails a parser that spins for 300 ms (the check described above).
 */
const EVENT_LOOP_LIMIT_MS = 200;
/**
 * Every /health/live probe answers 200 within this, however loaded the machine is: a bound that
 * tells "answering" from "stopped answering", not a speed (2 s was outrun at load averages
 * past 20 on two cores, where the operating system alone kept the process waiting that long).
 */
const PROBE_LIMIT_MS = 10_000;

interface Attempt {
  number: number;
  httpStatus: number | null;
  networkError: string | null;
  errorClass: string;
  decision: string;
  retryAt: string | null;
  finishedAt: string;
  responseExcerpt: string | null;
  warnings?: string[];
}
interface Job {
  id: string;
  status: string;
  remoteId: string | null;
  attempts: Attempt[];
}

/** A thread of its own probing /health/live, so the test's own work cannot delay the probe. */
const PROBE = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const samples = [];
let stopping = false;
parentPort.on('message', () => { stopping = true; });
function probe() {
  if (stopping) { parentPort.postMessage(samples); agent.destroy(); return; }
  const started = process.hrtime.bigint();
  const done = (status) => {
    samples.push({ ms: Number(process.hrtime.bigint() - started) / 1e6, status });
    setTimeout(probe, 20);
  };
  const req = http.get(workerData.url, { agent }, (res) => { res.resume(); res.on('end', () => done(res.statusCode)); });
  req.setTimeout(5000, () => req.destroy());
  req.on('error', () => done(0));
}
probe();
`;

interface Sample {
  ms: number;
  status: number;
}

function startProbe(url: string): { stop(): Promise<Sample[]> } {
  const worker = new Worker(PROBE, { eval: true, workerData: { url } });
  return {
    stop: () =>
      new Promise<Sample[]>((resolve, reject) => {
        worker.once('message', (samples: Sample[]) => {
          void worker.terminate();
          resolve(samples);
        });
        worker.once('error', reject);
        worker.postMessage('stop');
      }),
  };
}

/** 2 MB of `unit`, after `prefix`. */
const twoMegabytes = (unit: string, prefix = ''): string => prefix + unit.repeat(Math.floor((2 * 1024 * 1024) / unit.length));

/** A complete HTML answer with a content-length. */
const page =
  (html: string): Behaviour =>
  (socket) => {
    const body = Buffer.from(html, 'utf8');
    socket.end(Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: ${body.length}\r\n\r\n`), body]));
  };

const status =
  (code: number, headers: Record<string, string> = {}, body = ''): Behaviour =>
  (socket) => {
    const head = Object.entries({ 'content-length': String(Buffer.byteLength(body)), ...headers })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.end(`HTTP/1.1 ${code} Whatever\r\n${head}\r\n${body}`);
  };

/** The webhook receivers: one misbehaviour each, by path. */
const RECEIVERS: Record<string, Behaviour> = {
  '/garbage': garbage,
  '/endless-200': endlessBody(200),
  '/endless-503': endlessBody(503),
  '/slow-status-line': trickle('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n', 400),
  '/slow-body-after-500': (socket) => {
    socket.write('HTTP/1.1 500 Internal Server Error\r\ncontent-length: 1000\r\n\r\n');
    trickle('e'.repeat(1000), 400)(socket, '');
  },
  '/enormous-headers': enormousHeaders(4 * 1024 * 1024),
  '/retry-after-soon': status(503, { 'retry-after': 'soon' }),
  '/retry-after-nonsense-date': status(429, { 'retry-after': 'Tue, 31 Feb 2026 25:61:00 GMT' }),
  '/retry-after-forever': status(503, { 'retry-after': '99999999999999999999' }),
};

/** The link pages a Bluesky post points at. */
const PAGES: Record<string, Behaviour> = {
  '/unclosed-meta': page(twoMegabytes('<meta ', '<html><head><meta property="og:title" content="Before the flood">')),
  '/huge-attribute': page(`<head><meta property="og:title" content="Big"><meta ${'a'.repeat(2 * 1024 * 1024)}>`),
  '/title-bomb': page(twoMegabytes('<title>', '<head>')),
  '/tag-soup': page(twoMegabytes('<div></span>', '<head><meta property="og:description" content="Soup">')),
  '/endless-after-head': endlessBody(
    200,
    'text/html',
    '<html><head><meta property="og:title" content="Endless body, fine head"></head><body>',
  ),
  '/endless-head': endlessBody(200, 'text/html', '<html><head><meta property="og:title" content="Head without end">'),
};

function byPath(table: Record<string, Behaviour>): Behaviour {
  return (socket, request) => {
    const target = /^[A-Z]+ (\S+)/.exec(request)?.[1] ?? '/';
    const behaviour = table[target.split('?')[0]];
    if (behaviour) behaviour(socket, request);
    else socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n');
  };
}

describe('hostile receivers and pages, with the worker running', () => {
  let receivers: RawServer;
  let pages: RawServer;
  let linkedin: RawServer;
  let pds: TestPdsHandle;
  let herald: ServiceProcess;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-hostile-'));

  beforeAll(async () => {
    receivers = await startRawServer(byPath(RECEIVERS));
    pages = await startRawServer(byPath(PAGES));
    // LinkedIn endpoints are the operator's: this one sends its headers, then trickles the body.
    linkedin = await startRawServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 500\r\n\r\n{');
      trickle(' '.repeat(499), 400)(socket, '');
    });
    pds = await startPds();
    const { url } = await createTestDatabase();
    herald = ServiceProcess.start(
      {
        DATABASE_URL: url,
        HERALD_API_KEY: API_KEY,
        HERALD_SECRET_KEY: 'ab'.repeat(32),
        HERALD_DATA_DIR: dataDir,
        HERALD_ALLOW_PRIVATE_URLS: 'true',
        LOG_LEVEL: 'warn',
        HTTP_CONNECT_TIMEOUT_MS: '1000',
        // 10 s: the hostile receivers trickle for far longer (15 s to 400 s), and the real PDS's
        // ordinary answers have taken more than 2 s on a loaded machine (the first post then
        // failed both its attempts).
        HTTP_TOTAL_TIMEOUT_MS: '10000',
        WORKER_POLL_INTERVAL_MS: '100',
        RETRY_BASE_DELAY_MS: '30000',
        RETRY_MAX_DELAY_MS: '30000',
        RETRY_MAX_SERVER_DELAY_MS: '600000',
        LINKEDIN_API_BASE_URL: linkedin.url,
        LINKEDIN_OAUTH_BASE_URL: linkedin.url,
        METRICS_TOKEN,
      },
      await freePort(),
    );
    await herald.waitReady(120_000);
    // A PDS and a Herald process starting beside other test runs have taken more than jest's 60 s.
  }, 180_000);

  afterAll(async () => {
    await herald?.stop('SIGTERM');
    await Promise.all([receivers?.close(), pages?.close(), linkedin?.close(), pds?.close()]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function account(provider: string, config: Record<string, unknown>): Promise<string> {
    // Two attempts at most, 30 s apart: each case shows its first attempt and the retry decision.
    const res = await api<{ id: string }>(herald, API_KEY, 'POST', '/v1/accounts', {
      provider,
      name: `${provider} account`,
      config,
      retryPolicy: { maxAttempts: 2 },
    });
    if (res.status !== 201) throw new Error(`account: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id;
  }

  async function post(accountId: string, body: Record<string, unknown>): Promise<string> {
    const res = await api<{ jobs: { id: string }[] }>(herald, API_KEY, 'POST', '/v1/posts', { targets: [{ accountId }], ...body });
    if (res.status !== 201) throw new Error(`post: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.jobs[0].id;
  }

  const job = async (id: string): Promise<Job> => (await api<Job>(herald, API_KEY, 'GET', `/v1/jobs/${id}`)).body;

  /**
   * The worst event-loop blocking and the worst plain event-loop delay since the previous scrape,
   * in ms (each scrape starts a new window for both).
   */
  async function eventLoop(): Promise<{ blockedMs: number; delayMs: number }> {
    const res = await fetch(`${herald.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`/metrics: ${res.status} ${text}`);
    const gauge = (name: string): number => {
      const line = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
      if (!line) throw new Error(`/metrics has no ${name}`);
      return Number(line[1]) * 1000;
    };
    return { blockedMs: gauge('herald_event_loop_blocked_max_seconds'), delayMs: gauge('herald_nodejs_eventloop_lag_max_seconds') };
  }

  it('classifies each hostile answer and page while the event loop is never blocked for 200 ms', async () => {
    const author = await pds.createAccount('hostile');
    const bluesky = await account('bluesky', { identifier: author.handle, appPassword: author.appPassword, service: pds.url });
    const linkedinAccount = await account('linkedin', { accessToken: 'AQVhostile-token', authorUrn: 'urn:li:person:hostile1' });

    // A first post logs the account in and stores its session, so the hostile posts below
    // reuse it rather than all racing to store a new one.
    const warmUp = await post(bluesky, { text: 'hello' });
    await waitUntil(async () => (await job(warmUp)).status === 'succeeded', 120_000, 'the first Bluesky post');

    await eventLoop(); // the window starts here: start-up and the warm-up post are not judged
    const probe = startProbe(`${herald.url}/health/live`);
    const jobs = new Map<string, string>();
    try {
      for (const target of Object.keys(RECEIVERS)) {
        const id = await account('webhook', { url: `${receivers.url}${target}` });
        jobs.set(target, await post(id, { text: `to ${target}` }));
      }
      for (const target of Object.keys(PAGES))
        jobs.set(target, await post(bluesky, { text: `card from ${target}`, link: `${pages.url}${target}` }));
      // An image makes the LinkedIn connector ask for an upload URL, whose answer trickles.
      const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
      const form = new FormData();
      form.append('alt', 'one pixel');
      form.append('file', new Blob([png], { type: 'image/png' }), 'pixel.png');
      const media = (await (
        await fetch(`${herald.url}/v1/media`, { method: 'POST', headers: { authorization: `Bearer ${API_KEY}` }, body: form })
      ).json()) as { id: string };
      jobs.set('linkedin', await post(linkedinAccount, { text: 'slow upload answer', media: [media.id] }));

      await waitUntil(
        async () => {
          for (const id of jobs.values()) if ((await job(id)).attempts.length === 0) return false;
          return true;
        },
        120_000,
        'a first attempt of every job',
      );
    } finally {
      const samples = await probe.stop();
      const { blockedMs, delayMs } = await eventLoop();
      const worst = Math.max(...samples.map((s) => s.ms));
      // Printed for the record: how responsive the process stayed.
      process.stdout.write(
        `hostile suite: event loop blocked at most ${blockedMs.toFixed(1)} ms (loop delay ${delayMs.toFixed(1)} ms); ` +
          `${samples.length} health probes, worst round trip ${worst.toFixed(1)} ms\n`,
      );
      expect(blockedMs).toBeLessThan(EVENT_LOOP_LIMIT_MS);
      expect(samples.length).toBeGreaterThan(20);
      expect(samples.filter((s) => s.status !== 200 || s.ms >= PROBE_LIMIT_MS)).toEqual([]);
    }

    const first = async (name: string): Promise<Attempt> => (await job(jobs.get(name)!)).attempts[0];
    const retriedAfter = (a: Attempt): number => new Date(a.retryAt!).getTime() - new Date(a.finishedAt).getTime();

    expect(await first('/garbage')).toMatchObject({
      errorClass: 'transient',
      httpStatus: null,
      networkError: expect.stringMatching(/^HPE_/),
    });
    // The status stands; the body is read no further than the cap, and the excerpt is bounded.
    const endless200 = await first('/endless-200');
    expect(endless200).toMatchObject({ errorClass: 'success', httpStatus: 200 });
    expect(Buffer.byteLength(endless200.responseExcerpt ?? '')).toBeLessThanOrEqual(2048);
    expect(await first('/endless-503')).toMatchObject({ errorClass: 'transient', httpStatus: 503 });
    expect(await first('/slow-status-line')).toMatchObject({ errorClass: 'transient', httpStatus: null, networkError: 'total_timeout' });
    expect(await first('/slow-body-after-500')).toMatchObject({ errorClass: 'transient', httpStatus: 500 });
    expect(await first('/enormous-headers')).toMatchObject({
      errorClass: 'transient',
      httpStatus: null,
      networkError: 'HPE_HEADER_OVERFLOW',
    });
    // Unreadable Retry-After values are ignored: the retry waits the backoff (≤ 30 s), not "forever".
    for (const name of ['/retry-after-soon', '/retry-after-nonsense-date']) {
      const a = await first(name);
      expect(a).toMatchObject({ errorClass: 'transient', decision: 'retry' });
      expect(retriedAfter(a)).toBeLessThanOrEqual(30_000);
    }
    // An absurdly long one is capped at RETRY_MAX_SERVER_DELAY_MS (10 minutes here).
    const forever = await first('/retry-after-forever');
    expect(forever).toMatchObject({ errorClass: 'transient', decision: 'retry' });
    expect(retriedAfter(forever)).toBeLessThanOrEqual(600_000 + 1_000);
    expect(retriedAfter(forever)).toBeGreaterThan(500_000);

    // LinkedIn's upload answer trickled past the total timeout: no answer, transient.
    expect(await first('linkedin')).toMatchObject({ errorClass: 'transient', httpStatus: null, networkError: 'total_timeout' });

    // Every hostile page leaves the post published; the card is whatever the head held.
    for (const name of Object.keys(PAGES)) expect(await first(name)).toMatchObject({ errorClass: 'success' });
    const titles: Record<string, string | undefined> = {};
    for (const name of Object.keys(PAGES)) {
      const uri = (await job(jobs.get(name)!)).remoteId!;
      const res = await pds.network.pds
        .getAgent()
        .com.atproto.repo.getRecord({ repo: author.did, collection: 'app.bsky.feed.post', rkey: uri.split('/').pop()! });
      titles[name] = ((res.data.value as AppBskyFeedPost.Record).embed as AppBskyEmbedExternal.Main | undefined)?.external.title;
    }
    expect(titles).toEqual({
      '/unclosed-meta': 'Before the flood',
      '/huge-attribute': 'Big',
      // A <title> that never closes runs to the end of what was read, as in a browser.
      '/title-bomb': expect.stringMatching(/^<title><title><title>.{0,300}…$/),
      '/tag-soup': `${pages.url}/tag-soup`,
      '/endless-after-head': 'Endless body, fine head',
      '/endless-head': 'Head without end',
    });

    // The endless and the slow answers were cut by Herald, not ended by their servers.
    const cut = (server: RawServer) => server.hungUp.map((line) => line.split(' ')[1]);
    await waitUntil(() => cut(receivers).length >= 4 && cut(pages).length >= 2, 5_000, 'the servers to see Herald hang up');
    expect(cut(receivers)).toEqual(expect.arrayContaining(['/endless-200', '/endless-503', '/slow-status-line', '/slow-body-after-500']));
    expect(cut(pages)).toEqual(expect.arrayContaining(['/endless-after-head', '/endless-head']));
  }, 360_000);
});
