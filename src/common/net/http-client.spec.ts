import { getEventListeners } from 'node:events';
import * as http from 'node:http';
import * as net from 'node:net';
import type { Duplex } from 'node:stream';
import { Receiver, startReceiver } from '../../../test/support/receiver';
import { freePort } from '../../../test/support/net';
import { endlessBody, enormousHeaders, garbage, startRawServer, trickle } from '../../../test/support/hostile';
import { attemptDeadlineReason } from './deadline';
import {
  closeIdleSockets,
  HttpNetworkError,
  HttpResponseResult,
  HttpResult,
  MAX_PARSE_BYTES,
  postJson,
  PostJsonOptions,
  send,
  SendOptions,
  utf8Prefix,
} from './http-client';

/**
 * postJson against real loopback sockets: what the connector and the LinkedIn ambiguity rule rely
 * on (codes, the `sent` flag, bounded reads, no redirects, the connect-time guard).
 */

const OPTS: PostJsonOptions = { connectTimeoutMs: 1_000, totalTimeoutMs: 2_000, excerptBytes: 256, allowPrivate: true };
const JSON_HEADERS = { 'content-type': 'application/json' };

function asResponse(result: HttpResult): HttpResponseResult {
  if (result.kind !== 'response') throw new Error(`expected a response, got ${result.code}: ${result.message}`);
  return result;
}

function asNetworkError(result: HttpResult): HttpNetworkError {
  if (result.kind !== 'network_error') throw new Error(`expected a network error, got HTTP ${result.status}`);
  return result;
}

describe('utf8Prefix', () => {
  it('keeps a short buffer whole', () => {
    expect(utf8Prefix(Buffer.from('héllo'), 100)).toBe('héllo');
  });

  it('never cuts a multi-byte character in half', () => {
    const buf = Buffer.from('aé€😀'); // 1 + 2 + 3 + 4 bytes
    expect(utf8Prefix(buf, 2)).toBe('a');
    expect(utf8Prefix(buf, 3)).toBe('aé');
    expect(utf8Prefix(buf, 5)).toBe('aé');
    expect(utf8Prefix(buf, 6)).toBe('aé€');
    expect(utf8Prefix(buf, 9)).toBe('aé€');
    expect(utf8Prefix(buf, 10)).toBe('aé€😀');
    expect(utf8Prefix(buf, 0)).toBe('');
  });
});

describe('postJson', () => {
  let receiver: Receiver;

  beforeEach(async () => {
    receiver = await startReceiver();
  });

  afterEach(async () => {
    closeIdleSockets();
    await receiver.close();
  });

  it('posts the body with a content-length and returns status, headers and body', async () => {
    receiver.respondWith({ status: 201, headers: { 'x-answer': '42' }, body: { url: 'https://blog.example/p/1' } });
    const result = asResponse(await postJson(receiver.urlFor('/hook?a=1'), '{"hello":"wörld"}', JSON_HEADERS, OPTS));
    expect(result.status).toBe(201);
    expect(result.headers['x-answer']).toBe('42');
    expect(JSON.parse(result.body.toString('utf8'))).toEqual({ url: 'https://blog.example/p/1' });
    expect(result.cut).toBeNull();
    const [request] = await receiver.waitFor(1);
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/hook?a=1');
    expect(request.body).toBe('{"hello":"wörld"}');
    expect(request.headers['content-length']).toBe(String(Buffer.byteLength('{"hello":"wörld"}')));
  });

  it('reuses one keep-alive connection for consecutive requests to the same receiver', async () => {
    for (let i = 0; i < 3; i++) asResponse(await postJson(receiver.url, '{}', JSON_HEADERS, OPTS));
    const requests = await receiver.waitFor(3);
    expect(new Set(requests.map((r) => r.remotePort)).size).toBe(1);
  });

  it('returns a 3xx as a status and never follows the redirect', async () => {
    receiver.setHandler((req) => (req.path === '/moved' ? 200 : { status: 302, headers: { location: '/moved' } }));
    const result = asResponse(await postJson(receiver.urlFor('/hook'), '{}', JSON_HEADERS, OPTS));
    expect(result.status).toBe(302);
    expect(result.headers.location).toBe('/moved');
    expect(receiver.requests.map((r) => r.path)).toEqual(['/hook']);
  });

  it('reads a huge body only up to its bounds and stops reading', async () => {
    receiver.respondWith({ status: 500, body: Buffer.alloc(5 * 1024 * 1024, 'x') });
    const result = asResponse(await postJson(receiver.url, '{}', JSON_HEADERS, OPTS));
    expect(result.status).toBe(500);
    expect(result.body).toHaveLength(MAX_PARSE_BYTES);
    expect(result.cut).toBe('limit');
  });

  it('reports a refused connection as ECONNREFUSED, not sent', async () => {
    const port = await freePort();
    const result = asNetworkError(await postJson(`http://127.0.0.1:${port}/`, '{}', JSON_HEADERS, OPTS));
    expect(result.code).toBe('ECONNREFUSED');
    expect(result.sent).toBe(false);
  });

  it('gives up on a receiver that never answers after the total timeout, marked as sent', async () => {
    receiver.respondWith({ hang: true });
    const started = Date.now();
    const result = asNetworkError(await postJson(receiver.url, '{}', JSON_HEADERS, { ...OPTS, totalTimeoutMs: 300 }));
    expect(result.code).toBe('total_timeout');
    expect(result.sent).toBe(true);
    // Not before the timeout; the code says the timeout (and not the receiver) ended it.
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('reports a connection dropped after the request as ECONNRESET, marked as sent', async () => {
    receiver.respondWith({ destroy: true });
    const result = asNetworkError(await postJson(receiver.url, '{}', JSON_HEADERS, OPTS));
    expect(result.code).toBe('ECONNRESET');
    expect(result.sent).toBe(true);
  });

  it('times out a connection that is never established as connect_timeout, not sent', async () => {
    // Sockets whose name lookup never answers stand in for a host that drops SYNs (or a DNS
    // server that never replies): either way the socket stays in 'connecting'.
    class StallingAgent extends http.Agent {
      override createConnection(): Duplex {
        return net.connect({ host: 'stalled.invalid', port: 80, lookup: () => undefined });
      }
    }
    const agent = new StallingAgent();
    const result = asNetworkError(await postJson('http://192.0.2.1/', '{}', JSON_HEADERS, { ...OPTS, connectTimeoutMs: 150, agent }));
    expect(result.code).toBe('connect_timeout');
    expect(result.sent).toBe(false);
    expect(result.latencyMs).toBeGreaterThanOrEqual(140);
  });

  it('stops when the signal aborts, before or during the exchange', async () => {
    const before = new AbortController();
    before.abort();
    const early = asNetworkError(await postJson(receiver.url, '{}', JSON_HEADERS, { ...OPTS, signal: before.signal }));
    expect(early).toMatchObject({ code: 'aborted', sent: false });

    receiver.respondWith({ hang: true });
    const during = new AbortController();
    const pending = postJson(receiver.url, '{}', JSON_HEADERS, { ...OPTS, signal: during.signal });
    await receiver.waitFor(1);
    during.abort();
    expect(asNetworkError(await pending)).toMatchObject({ code: 'aborted', sent: true });
  });

  it('leaves no listener on a signal shared by many requests once they settle', async () => {
    const shared = new AbortController();
    // What is checked is the listeners, not speed: deadlines far above what 30 requests at once
    // take on a loaded machine (with OPTS' 1 s / 2 s, one of them timed out at load average 7).
    const roomy = { ...OPTS, connectTimeoutMs: 15_000, totalTimeoutMs: 30_000, signal: shared.signal };
    const results = await Promise.all(Array.from({ length: 30 }, () => postJson(receiver.url, '{}', JSON_HEADERS, roomy)));
    expect(results.every((r) => r.kind === 'response' && r.status === 200)).toBe(true);
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
  });

  it('refuses private destinations at connect time unless allowed, for literals and hostnames', async () => {
    const literal = asNetworkError(await postJson(receiver.url, '{}', JSON_HEADERS, { ...OPTS, allowPrivate: false }));
    expect(literal).toMatchObject({ code: 'EBLOCKEDADDRESS', sent: false });
    expect(literal.message).toContain('HERALD_ALLOW_PRIVATE_URLS');

    const named = asNetworkError(
      await postJson(`http://localhost:${receiver.port}/`, '{}', JSON_HEADERS, { ...OPTS, allowPrivate: false }),
    );
    expect(named).toMatchObject({ code: 'EBLOCKEDADDRESS', sent: false });
    expect(receiver.requests).toHaveLength(0);
  });

  it('turns what Node would throw (an invalid header value) into a result', async () => {
    const result = asNetworkError(await postJson(receiver.url, '{}', { 'x-bad': 'a\r\nb' }, OPTS));
    expect(result.code).toBe('ERR_INVALID_CHAR');
    expect(result.message).not.toContain('a\r\nb');
  });
});

describe('send: the deadline, the signal and the limits on every request', () => {
  const LIMITS: SendOptions = { connectTimeoutMs: 1_000, totalTimeoutMs: 1_500, allowPrivate: true, maxBodyBytes: 64 * 1024 };
  const get = (url: string) => ({ method: 'GET', url });

  afterEach(() => closeIdleSockets());

  it('cuts off a server that trickles its status line one byte at a time at the total deadline (no idle timeout ever fires)', async () => {
    const server = await startRawServer(trickle('HTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n', 200));
    try {
      const started = Date.now();
      const result = asNetworkError(await send(get(server.url), LIMITS));
      expect(result).toMatchObject({ code: 'total_timeout', sent: true });
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    } finally {
      await server.close();
    }
  });

  it('keeps a status that arrived and cuts a trickled body at the deadline', async () => {
    const server = await startRawServer((socket) => {
      socket.write('HTTP/1.1 503 Service Unavailable\r\ncontent-length: 1000\r\n\r\n');
      trickle('x'.repeat(1000), 200)(socket, '');
    });
    try {
      const result = asResponse(await send(get(server.url), LIMITS));
      expect(result.status).toBe(503);
      expect(result.cut).toBe('total_timeout');
      expect(result.body.length).toBeLessThan(20);
    } finally {
      await server.close();
    }
  });

  it("stops at the attempt's deadline when its signal fires first, as attempt_deadline", async () => {
    const server = await startRawServer(trickle('HTTP/1.1 200 OK\r\n\r\n', 500));
    try {
      const started = Date.now();
      const byTimeout = asNetworkError(
        await send(get(server.url), { ...LIMITS, totalTimeoutMs: 20_000, signal: AbortSignal.timeout(300) }),
      );
      expect(byTimeout).toMatchObject({ code: 'attempt_deadline', sent: true });
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);

      const controller = new AbortController();
      setTimeout(() => controller.abort(attemptDeadlineReason()), 200);
      expect(asNetworkError(await send(get(server.url), { ...LIMITS, totalTimeoutMs: 20_000, signal: controller.signal }))).toMatchObject({
        code: 'attempt_deadline',
      });

      const shutdown = new AbortController();
      setTimeout(() => shutdown.abort(), 200);
      expect(asNetworkError(await send(get(server.url), { ...LIMITS, totalTimeoutMs: 20_000, signal: shutdown.signal }))).toMatchObject({
        code: 'aborted',
      });

      const already = new AbortController();
      already.abort(attemptDeadlineReason());
      expect(asNetworkError(await send(get(server.url), { ...LIMITS, signal: already.signal }))).toMatchObject({
        code: 'attempt_deadline',
        sent: false,
      });
    } finally {
      await server.close();
    }
  });

  it('reads an endless body only up to maxBodyBytes, keeps keepBytes of it, and hangs up', async () => {
    const server = await startRawServer(endlessBody());
    try {
      const result = asResponse(await send(get(server.url), { ...LIMITS, maxBodyBytes: 256 * 1024, keepBytes: 1024 }));
      expect(result).toMatchObject({ status: 200, cut: 'limit' });
      expect(result.body).toHaveLength(1024);
      await waitFor(() => server.clientHangUps() === 1);
    } finally {
      await server.close();
    }
  });

  it('lets the caller stop reading early, seeing the status and headers', async () => {
    const server = await startRawServer(endlessBody(200, 'text/html', '<html><head><title>x</title></head>'));
    try {
      const seen: string[] = [];
      const result = asResponse(
        await send(get(server.url), {
          ...LIMITS,
          stopReading: (chunk, response) => {
            seen.push(String(response.headers['content-type']));
            return chunk.toString('latin1').includes('</head>');
          },
        }),
      );
      expect(result.cut).toBe('stopped');
      expect(result.body.toString('latin1')).toContain('</head>');
      expect(seen[0]).toBe('text/html');
      await waitFor(() => server.clientHangUps() === 1);
    } finally {
      await server.close();
    }
  });

  it('refuses headers larger than 16 KiB, and answers that are not HTTP, as network errors', async () => {
    const big = await startRawServer(enormousHeaders(1024 * 1024));
    const junk = await startRawServer(garbage);
    try {
      expect(asNetworkError(await send(get(big.url), LIMITS))).toMatchObject({ code: 'HPE_HEADER_OVERFLOW', sent: true });
      expect(asNetworkError(await send(get(junk.url), LIMITS)).code).toMatch(/^HPE_/);
    } finally {
      await big.close();
      await junk.close();
    }
  });

  it('sends a GET without a body or content-length, and a PUT with a binary one', async () => {
    const receiver = await startReceiver();
    try {
      asResponse(await send({ method: 'GET', url: receiver.urlFor('/page') }, LIMITS));
      asResponse(await send({ method: 'PUT', url: receiver.urlFor('/blob'), body: Buffer.from([0, 1, 2, 255]) }, LIMITS));
      const [getRequest, putRequest] = await receiver.waitFor(2);
      expect(getRequest.headers['content-length']).toBeUndefined();
      expect(putRequest.headers['content-length']).toBe('4');
    } finally {
      await receiver.close();
    }
  });
});

async function waitFor(check: () => boolean, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('send on undici: what the layer adds to the pool', () => {
  const LIMITS: SendOptions = { connectTimeoutMs: 1_000, totalTimeoutMs: 1_500, allowPrivate: true, maxBodyBytes: 64 * 1024 };

  afterEach(() => closeIdleSockets());

  it('never writes a request whose deadline passed while it waited for its connection, and says it was not sent', async () => {
    const receiver = await startReceiver();
    // The connection to the receiver is made, but its name lookup answers only after 300 ms.
    class SlowLookupAgent extends http.Agent {
      override createConnection(): Duplex {
        return net.connect({
          host: 'receiver.slow',
          port: receiver.port,
          lookup: (_name, options, callback) =>
            setTimeout(
              () => (options.all === true ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4)),
              300,
            ),
        });
      }
    }
    try {
      const result = asNetworkError(
        await send(
          { method: 'POST', url: 'http://192.0.2.1/hook', body: '{}' },
          { ...LIMITS, totalTimeoutMs: 100, agent: new SlowLookupAgent() },
        ),
      );
      expect(result).toMatchObject({ code: 'total_timeout', sent: false });
      await new Promise((r) => setTimeout(r, 600));
      expect(receiver.requests).toHaveLength(0);
    } finally {
      await receiver.close();
    }
  });

  it('reads past interim 1xx answers to the final one', async () => {
    const server = await startRawServer((socket) =>
      socket.end('HTTP/1.1 103 Early Hints\r\nlink: </style.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'),
    );
    try {
      const result = asResponse(await send(get(server.url), LIMITS));
      expect(result).toMatchObject({ status: 200, cut: null });
      expect(result.body.toString()).toBe('ok');
    } finally {
      await server.close();
    }
  });

  it('sends a header given twice in different cases once, the last value winning (as setHeader does)', async () => {
    const receiver = await startReceiver();
    try {
      asResponse(await send({ method: 'post', url: receiver.url, headers: { 'X-Tag': 'a', 'x-tag': 'b' }, body: 'hi' }, LIMITS));
      const [request] = await receiver.waitFor(1);
      expect(request.method).toBe('POST');
      expect(request.headers['x-tag']).toBe('b');
      expect(request.headers['content-length']).toBe('2');
    } finally {
      await receiver.close();
    }
  });

  it('without an agent (agent: false) uses a connection of its own and closes it', async () => {
    const receiver = await startReceiver();
    try {
      for (let i = 0; i < 2; i++) asResponse(await send({ method: 'GET', url: receiver.url }, { ...LIMITS, agent: false }));
      const requests = await receiver.waitFor(2);
      expect(requests.map((r) => r.headers.connection)).toEqual(['close', 'close']);
      expect(new Set(requests.map((r) => r.remotePort)).size).toBe(2);
    } finally {
      await receiver.close();
    }
  });

  function get(url: string) {
    return { method: 'GET', url };
  }
});
