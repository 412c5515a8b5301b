import { endlessBody, startRawServer, trickle } from '../../../test/support/hostile';
import { startReceiver } from '../../../test/support/receiver';
import { guardedFetch } from './guarded-fetch';
import { closeIdleSockets } from './http-client';

/** The fetch adapter an SDK (@atproto/api) gets: the layer's rules, thrown as coded errors. */

const fetchWith = (maxBodyBytes = 64 * 1024) =>
  guardedFetch({ connectTimeoutMs: 1_000, totalTimeoutMs: 1_500, maxBodyBytes, allowPrivate: true });

describe('guardedFetch', () => {
  afterEach(() => closeIdleSockets());

  it('answers like fetch, never following a redirect', async () => {
    const receiver = await startReceiver((req) =>
      req.path === '/moved' ? 200 : { status: 302, headers: { location: '/moved' }, body: { a: 1 } },
    );
    try {
      const res = await fetchWith()(receiver.urlFor('/xrpc/x'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"q":1}',
      });
      expect(res.status).toBe(302);
      expect(await res.json()).toEqual({ a: 1 });
      expect(receiver.requests.map((r) => [r.path, r.body])).toEqual([['/xrpc/x', '{"q":1}']]);
    } finally {
      await receiver.close();
    }
  });

  it('rejects an answer larger than its cap as too_large, and one cut short with the code that cut it', async () => {
    const endless = await startRawServer(endlessBody(200, 'application/json'));
    const slow = await startRawServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{');
      trickle('"a":'.repeat(25), 300)(socket, '');
    });
    try {
      await expect(fetchWith()(endless.url)).rejects.toMatchObject({ code: 'too_large' });
      await expect(fetchWith()(slow.url)).rejects.toMatchObject({ code: 'total_timeout', sent: true });
    } finally {
      await endless.close();
      await slow.close();
    }
  });

  it("stops at the signal the SDK passes in init (the attempt's deadline)", async () => {
    const server = await startRawServer(trickle('HTTP/1.1 200 OK\r\n\r\n', 300));
    try {
      await expect(fetchWith()(server.url, { signal: AbortSignal.timeout(200) })).rejects.toMatchObject({ code: 'attempt_deadline' });
    } finally {
      await server.close();
    }
  });

  it('refuses a private destination unless allowed', async () => {
    const receiver = await startReceiver();
    try {
      const guarded = guardedFetch({ connectTimeoutMs: 1_000, totalTimeoutMs: 1_500, maxBodyBytes: 1024, allowPrivate: false });
      await expect(guarded(receiver.url)).rejects.toMatchObject({ code: 'EBLOCKEDADDRESS', sent: false });
      expect(receiver.requests).toHaveLength(0);
    } finally {
      await receiver.close();
    }
  });
});
