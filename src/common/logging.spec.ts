import { Writable } from 'node:stream';
import pino from 'pino';
import { chooseLogFormat, prettyMessage, REDACT_PATHS } from './logging';
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
