import type * as dns from 'node:dns';
import { request } from 'undici';
import { startReceiver } from '../../../test/support/receiver';
import { keepAliveAgent } from './dispatchers';
import { BLOCKED_ADDRESS_CODE, guardedLookup } from './ssrf-guard';

/**
 * The SSRF guard's promise rests on one fact about undici: a connection goes to the address the
 * connector's lookup answered, and to nothing else. Proved here on real loopback connections, so
 * that an undici upgrade that stopped passing `connect.lookup` to `net.connect` fails this file.
 */

/** A resolver that knows one name, and counts how often it is asked. */
function resolverFor(name: string, address: string) {
  const calls: string[] = [];
  const resolve = (
    hostname: string,
    _options: dns.LookupAllOptions,
    callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
  ): void => {
    calls.push(hostname);
    if (hostname === name) setImmediate(() => callback(null, [{ address, family: 4 }]));
    else setImmediate(() => callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []));
  };
  return { resolve, calls };
}

describe('keepAliveAgent: the connect-time lookup', () => {
  it('connects to the address the lookup answers, once per new connection', async () => {
    const receiver = await startReceiver();
    // `.example` names resolve nowhere: only the lookup can take this request to the receiver.
    const { resolve, calls } = resolverFor('receiver.example', '127.0.0.1');
    const agent = keepAliveAgent(guardedLookup(true, resolve), 1_000);
    try {
      for (let i = 0; i < 2; i++) {
        const res = await request(`http://receiver.example:${receiver.port}/hook`, { method: 'POST', body: '{}', dispatcher: agent });
        await res.body.text();
        expect(res.statusCode).toBe(200);
      }
      const requests = await receiver.waitFor(2);
      expect(requests.map((r) => r.headers.host)).toEqual([`receiver.example:${receiver.port}`, `receiver.example:${receiver.port}`]);
      // One lookup per connection made (undici may open a second one for a request sent the
      // moment the first answer ends), none for a connection reused.
      expect(calls.length).toBe(new Set(requests.map((r) => r.remotePort)).size);
      expect(new Set(calls)).toEqual(new Set(['receiver.example']));
    } finally {
      await agent.close();
      await receiver.close();
    }
  });

  it('refuses the connection when the guard refuses the answer, before a byte is sent', async () => {
    const receiver = await startReceiver();
    const { resolve } = resolverFor('rebound.example', '127.0.0.1');
    const agent = keepAliveAgent(guardedLookup(false, resolve), 1_000);
    try {
      await expect(
        request(`http://rebound.example:${receiver.port}/hook`, { method: 'POST', body: '{}', dispatcher: agent }),
      ).rejects.toMatchObject({ code: BLOCKED_ADDRESS_CODE });
      expect(receiver.requests).toHaveLength(0);
    } finally {
      await agent.close();
      await receiver.close();
    }
  });
});
