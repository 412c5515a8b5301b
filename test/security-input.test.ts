import * as net from 'node:net';
import { bootTestApp, TestApp } from './support/app';
import { bearer } from './support/config';

/**
 * Input refused before the application proper: too-deep JSON (it used to overflow the stack
 * into a 500) and requests Node's HTTP parser refuses (they used to get a bare status line).
 */
describe('input limits', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await bootTestApp({ config: { allowPrivateUrls: true } });
  });
  afterAll(() => t.close());

  it('refuses JSON nested deeper than 64 levels with 400, where 20 KB of it answered 500', async () => {
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    const res = await t.http().post('/v1/api-keys').set(bearer(t.adminKey)).set('Content-Type', 'application/json').send(deep);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'The request body nests deeper than 64 levels' });
    const nested = '{"name":"ok","x":' + '{"a":'.repeat(5_000) + '1' + '}'.repeat(5_000) + '}';
    expect((await t.http().post('/v1/api-keys').set(bearer(t.adminKey)).set('Content-Type', 'application/json').send(nested)).status).toBe(
      400,
    );
  });

  it('still takes JSON 64 levels deep where a field allows it (post metadata)', async () => {
    let metadata: unknown = 1;
    for (let i = 0; i < 63; i++) metadata = { a: metadata }; // with the body's own braces: 64 levels
    const account = await t
      .http()
      .post('/v1/accounts')
      .set(bearer(t.adminKey))
      .send({ provider: 'webhook', name: 'Deep', config: { url: 'http://127.0.0.1:9/hook' } });
    expect(account.status).toBe(201);
    const res = await t
      .http()
      .post('/v1/posts')
      .set(bearer(t.adminKey))
      .send({ text: 'deep', metadata, targets: [{ accountId: account.body.id }] });
    expect(res.body).toMatchObject({ metadata });
  });

  it.each([
    [
      "a NUL in a post's text",
      '/v1/posts',
      '{"text":"a\\u0000b","targets":[{"accountId":"ACCOUNT"}]}',
      'text contains a NUL character (U+0000), which cannot be stored',
    ],
    [
      "an unpaired surrogate in a post's text",
      '/v1/posts',
      '{"text":"a\\ud800b","targets":[{"accountId":"ACCOUNT"}]}',
      'text is not valid Unicode (it contains an unpaired surrogate)',
    ],
    [
      'a NUL in a metadata key',
      '/v1/posts',
      '{"text":"ok","metadata":{"k\\u0000":1},"targets":[{"accountId":"ACCOUNT"}]}',
      'metadata.k\u0000 (the key) contains a NUL character (U+0000), which cannot be stored',
    ],
    [
      'a NUL in an account name',
      '/v1/accounts',
      '{"provider":"webhook","name":"a\\u0000","config":{"url":"http://127.0.0.1:9/x"}}',
      'name contains a NUL character (U+0000), which cannot be stored',
    ],
  ])('refuses %s with 400 (it answered 500), writing nothing', async (_what, url, raw, message) => {
    const account = await t
      .http()
      .post('/v1/accounts')
      .set(bearer(t.adminKey))
      .send({ provider: 'webhook', name: 'Text', config: { url: 'http://127.0.0.1:9/hook' } });
    const res = await t
      .http()
      .post(url)
      .set(bearer(t.adminKey))
      .set('Content-Type', 'application/json')
      .send(raw.replace('ACCOUNT', account.body.id));
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(message);
    const posts = await t.http().get('/v1/posts').set(bearer(t.adminKey)).expect(200);
    expect(posts.text).not.toContain('\\u0000');
  });

  it('refuses a target that is an array instead of an object with 400 (it answered 500)', async () => {
    const account = await t
      .http()
      .post('/v1/accounts')
      .set(bearer(t.adminKey))
      .send({ provider: 'webhook', name: 'Nested', config: { url: 'http://127.0.0.1:9/hook' } });
    const res = await t
      .http()
      .post('/v1/posts')
      .set(bearer(t.adminKey))
      .send({ text: 'x', targets: [[{ accountId: account.body.id }]] });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('targets: each target must be an object { accountId, text?, visibility?, spoilerText? }');
  });

  it('refuses a NUL in a query parameter with 400 (the DLQ search answered 500)', async () => {
    const res = await t.http().get('/v1/dlq?q=a%00b').set(bearer(t.adminKey));
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('q contains a NUL character (U+0000), which cannot be stored');
  });

  /** A raw HTTP exchange, for requests no HTTP client library would send. */
  function rawRequest(text: string): Promise<string> {
    const { port } = t.app.getHttpServer().address() as net.AddressInfo;
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.end(text));
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      socket.on('error', reject);
    });
  }

  it('answers a URL over the 16 KB header limit with 431 in the JSON error shape', async () => {
    const answer = await rawRequest(`GET /v1/posts?q=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    expect(answer).toMatch(/content-type: application\/json/i);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
      statusCode: 431,
      error: 'Request Header Fields Too Large',
      message: "The request's headers (the URL included) are larger than the 16 KB limit",
    });
  });

  it('answers malformed HTTP with 400 in the JSON error shape', async () => {
    const answer = await rawRequest('GET /v1/posts HTTP/1.1\r\nHost: localhost\r\nBad Header Line\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      message: 'The request is not valid HTTP',
    });
  });
});
