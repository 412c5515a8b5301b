import { getEventListeners } from 'node:events';
import * as http from 'node:http';
import * as net from 'node:net';
import type { Duplex } from 'node:stream';
import { Receiver, startReceiver } from '../../../test/support/receiver';
import { freePort } from '../../../test/support/net';
import { closeIdleSockets, HttpNetworkError, HttpResponseResult, HttpResult, MAX_PARSE_BYTES, postJson, PostJsonOptions, utf8Prefix } from './http-client';

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
    expect(JSON.parse(result.bodyText)).toEqual({ url: 'https://blog.example/p/1' });
    expect(result.truncated).toBe(false);
    const [request] = await receiver.waitFor(1);
    expect(request!.method).toBe('POST');
    expect(request!.path).toBe('/hook?a=1');
    expect(request!.body).toBe('{"hello":"wörld"}');
    expect(request!.headers['content-length']).toBe(String(Buffer.byteLength('{"hello":"wörld"}')));
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
    expect(result.excerpt).toHaveLength(256);
    expect(result.bodyText).toHaveLength(MAX_PARSE_BYTES);
    expect(result.truncated).toBe(true);
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
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(Date.now() - started).toBeLessThan(1_500);
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
    const result = asNetworkError(
      await postJson('http://192.0.2.1/', '{}', JSON_HEADERS, { ...OPTS, connectTimeoutMs: 150, agent }),
    );
    expect(result.code).toBe('connect_timeout');
    expect(result.sent).toBe(false);
    expect(result.latencyMs).toBeLessThan(1_000);
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
    const results = await Promise.all(
      Array.from({ length: 30 }, () => postJson(receiver.url, '{}', JSON_HEADERS, { ...OPTS, signal: shared.signal })),
    );
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
