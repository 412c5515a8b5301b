import * as http from 'node:http';
import { startRawServer } from '../../../test/support/hostile';
import { closeIdleSockets, send } from './http-client';
import { layerErrorCode, toNodeHeaders } from './undici-mapping';

describe('toNodeHeaders', () => {
  it('folds repeated headers as Node does: first value, cookie list, comma list, set-cookie array', () => {
    expect(
      toNodeHeaders({
        'retry-after': ['120', '5'],
        location: ['/a', '/b'],
        cookie: ['a=1', 'b=2'],
        vary: ['accept', 'origin'],
        'set-cookie': 'only=1',
        'content-type': 'application/json',
      }),
    ).toEqual({
      'retry-after': '120',
      location: '/a',
      cookie: 'a=1; b=2',
      vary: 'accept, origin',
      'set-cookie': ['only=1'],
      'content-type': 'application/json',
    });
  });

  it('gives the same headers as node:http for the same answer', async () => {
    const head = [
      'HTTP/1.1 200 OK',
      'Content-Type: text/plain',
      'Content-Type: text/html',
      'Retry-After: 30',
      'Retry-After: 60',
      'Set-Cookie: a=1',
      'Set-Cookie: b=2',
      'Link: </a>; rel=next',
      'Link: </b>; rel=prev',
      'X-Custom:   padded   ',
      'ETag: "1"',
      'ETag: "2"',
      'Content-Length: 2',
    ].join('\r\n');
    const server = await startRawServer((socket) => socket.end(`${head}\r\n\r\nok`));
    try {
      const viaNode = await new Promise<http.IncomingHttpHeaders>((resolve, reject) => {
        http
          .get(server.url, { agent: false }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.headers));
          })
          .on('error', reject);
      });
      const viaLayer = await send(
        { method: 'GET', url: server.url },
        { connectTimeoutMs: 1_000, totalTimeoutMs: 2_000, allowPrivate: true, maxBodyBytes: 1024 },
      );
      if (viaLayer.kind !== 'response') throw new Error(`expected a response, got ${viaLayer.code}`);
      expect({ ...viaLayer.headers }).toEqual(viaNode);
    } finally {
      closeIdleSockets();
      await server.close();
    }
  });
});

describe('layerErrorCode', () => {
  it.each([
    ['UND_ERR_SOCKET', 'ECONNRESET'],
    ['UND_ERR_RES_CONTENT_LENGTH_MISMATCH', 'ECONNRESET'],
    ['UND_ERR_HEADERS_OVERFLOW', 'HPE_HEADER_OVERFLOW'],
    ['UND_ERR_CONNECT_TIMEOUT', 'connect_timeout'],
    ['ECONNREFUSED', 'ECONNREFUSED'],
    ['HPE_INVALID_CONSTANT', 'HPE_INVALID_CONSTANT'],
    ['EBLOCKEDADDRESS', 'EBLOCKEDADDRESS'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'ERR_TLS_CERT_ALTNAME_INVALID'],
  ])('names %s as %s', (code, expected) => {
    expect(layerErrorCode(Object.assign(new Error('x'), { code }))).toBe(expected);
  });

  it('finds the code inside an AggregateError (every address of a name refused)', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(layerErrorCode(new AggregateError([new Error('no code'), refused]))).toBe('ECONNREFUSED');
  });

  it("calls a parser error that lost its llhttp name (undici 8.14's) HPE_INVALID_RESPONSE", () => {
    const err = Object.assign(new Error('Response does not match the HTTP/1.1 protocol (Expected HTTP/)'), { name: 'HTTPParserError' });
    expect(layerErrorCode(err)).toBe('HPE_INVALID_RESPONSE');
  });

  it('says ERR_NETWORK when nothing names the failure', () => {
    expect(layerErrorCode(new Error('odd'))).toBe('ERR_NETWORK');
    expect(layerErrorCode('a string')).toBe('ERR_NETWORK');
  });
});
