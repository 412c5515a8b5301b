import { Writable } from 'node:stream';
import pino from 'pino';
import { chooseLogFormat, prettyMessage, REDACT_PATHS, loggedPath, loggerParams } from './logging';
import PinoPretty from 'pino-pretty';

describe('chooseLogFormat', () => {
  it.each([
    ['auto', true, 'pretty'],
    ['auto', false, 'json'],
    ['json', true, 'json'],
    ['json', false, 'json'],
    ['pretty', true, 'pretty'],
    ['pretty', false, 'pretty'],
  ] as const)('LOG_FORMAT=%s with a terminal: %s gives %s', (setting, tty, expected) => {
    expect(chooseLogFormat(setting, tty)).toBe(expected);
  });
});

describe('prettyMessage', () => {
  it('puts a request on one line: method, path, status, time', () => {
    expect(
      prettyMessage({ msg: 'request completed', req: { method: 'POST', path: '/v1/posts' }, res: { statusCode: 201 }, responseTime: 12.4 }),
    ).toBe('POST /v1/posts 201 12 ms');
  });

  it('prefixes other messages with their Nest context', () => {
    expect(prettyMessage({ msg: 'Nest application successfully started', context: 'NestApplication' })).toBe(
      '[NestApplication] Nest application successfully started',
    );
    expect(prettyMessage({ msg: 'plain' })).toBe('plain');
  });
});

describe('redaction', () => {
  it('keeps secrets out of readable lines as it does out of JSON', () => {
    let out = '';
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => ((out += chunk.toString()), done()) });
    const pretty = PinoPretty({ destination: sink, sync: true, colorize: false, messageFormat: (log) => prettyMessage(log) });
    const logger = pino({ redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, pretty);
    logger.info({ account: { accessToken: 'tok-123', config: { appPassword: 'pw-456' } }, apiKey: 'hk_789' }, 'saved');
    expect(out).toContain('saved');
    expect(out).toContain('[redacted]');
    for (const secret of ['tok-123', 'pw-456', 'hk_789']) expect(out).not.toContain(secret);
  });
});

describe('loggedPath', () => {
  it("writes a client review link's path without its token, and no query string anywhere", () => {
    const token = 'hQ3x9Jc2_-Kp0aZ7vYtq1mN5bR8sLw4eUo6iGd3fT2A';
    expect(loggedPath(`/review/${token}`)).toBe('/review/[redacted]');
    expect(loggedPath(`/review/${token}?answered=1`)).toBe('/review/[redacted]');
    expect(loggedPath(`/review/${token}/extra`)).toBe('/review/[redacted]/extra');
    expect(loggedPath('/v1/posts/abc?cursor=x')).toBe('/v1/posts/abc');
    expect(loggedPath('/settings/posts/abc/review')).toBe('/settings/posts/abc/review');
  });

  it("is what the request log's serializer prints for a request", () => {
    const params = loggerParams({ logLevel: 'info', logFormat: 'json' });
    const options = params.pinoHttp as { serializers: { req: (req: { url: string; method: string }) => { path: string } } };
    const token = 'A'.repeat(43);
    expect(JSON.stringify(options.serializers.req({ url: `/review/${token}`, method: 'GET' }))).not.toContain(token);
  });
});
