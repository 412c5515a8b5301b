import { classifyHttpStatus, classifyNetworkError, describeHttpOutcome } from './classify';
import { ErrorClass } from './error-class';

function statusesBetween(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

describe('classifyHttpStatus', () => {
  it.each(statusesBetween(200, 299))('treats %i as success', (status) => {
    expect(classifyHttpStatus(status)).toBe('success');
  });

  it.each([408, 425, 429])('treats %i as transient: the receiver says "not now", not "not this"', (status) => {
    expect(classifyHttpStatus(status)).toBe('transient');
  });

  it.each(statusesBetween(500, 599))('treats %i as transient', (status) => {
    expect(classifyHttpStatus(status)).toBe('transient');
  });

  it.each([401, 403])('treats %i as auth', (status) => {
    expect(classifyHttpStatus(status)).toBe('auth');
  });

  it.each(statusesBetween(300, 399))('treats %i as permanent because redirects are not followed', (status) => {
    expect(classifyHttpStatus(status)).toBe('permanent');
  });

  it.each(statusesBetween(400, 499).filter((s) => ![401, 403, 408, 425, 429].includes(s)))('treats %i as permanent', (status) => {
    expect(classifyHttpStatus(status)).toBe('permanent');
  });

  it.each([
    [0],
    [-1],
    [99],
    [100],
    [101],
    [103],
    [199],
    [600],
    [999],
    [1000],
    [200.5],
    [503.1],
    [Number.NaN],
    [Number.POSITIVE_INFINITY],
    [Number.NEGATIVE_INFINITY],
  ])('treats %p (not a final HTTP status) as permanent', (status) => {
    expect(classifyHttpStatus(status)).toBe('permanent');
  });

  it('covers the common statuses of the documented table', () => {
    const expected: Array<[number, ErrorClass]> = [
      [200, 'success'],
      [201, 'success'],
      [204, 'success'],
      [301, 'permanent'],
      [302, 'permanent'],
      [307, 'permanent'],
      [308, 'permanent'],
      [400, 'permanent'],
      [401, 'auth'],
      [403, 'auth'],
      [404, 'permanent'],
      [408, 'transient'],
      [409, 'permanent'],
      [410, 'permanent'],
      [413, 'permanent'],
      [422, 'permanent'],
      [425, 'transient'],
      [426, 'permanent'],
      [429, 'transient'],
      [500, 'transient'],
      [502, 'transient'],
      [503, 'transient'],
      [504, 'transient'],
    ];
    for (const [status, cls] of expected) expect([status, classifyHttpStatus(status)]).toEqual([status, cls]);
  });
});

describe('classifyNetworkError', () => {
  it.each([
    'ECONNREFUSED',
    'ECONNRESET',
    'ENOTFOUND',
    'EAI_AGAIN',
    'ETIMEDOUT',
    'ECONNABORTED',
    'EPIPE',
    'socket hang up',
    'timeout',
    'ERR_SOCKET_CONNECTION_TIMEOUT',
    'EHOSTUNREACH',
    'ENETUNREACH',
    'UND_ERR_CONNECT_TIMEOUT',
    'ESOMETHINGNEW',
    '',
    'econnreset',
  ])('treats %p as transient', (code) => {
    expect(classifyNetworkError(code)).toBe('transient');
  });

  it('treats a failure without a code as transient', () => {
    expect(classifyNetworkError(undefined)).toBe('transient');
  });
});

describe('describeHttpOutcome', () => {
  it('tells the user to update a redirected URL', () => {
    expect(describeHttpOutcome(302)).toBe('HTTP 302: the endpoint redirected (redirects are not followed); update the URL');
  });

  it('names an unavailable server', () => {
    expect(describeHttpOutcome(503)).toBe('HTTP 503: server unavailable');
  });

  it('says a generic 4xx rejected the payload', () => {
    expect(describeHttpOutcome(400)).toBe('HTTP 400: the receiver rejected the payload');
    expect(describeHttpOutcome(422)).toBe('HTTP 422: the receiver rejected the payload');
  });

  it('points auth failures at reconnecting the account', () => {
    expect(describeHttpOutcome(401)).toMatch(/reconnect the account/);
    expect(describeHttpOutcome(403)).toMatch(/reconnect the account/);
  });

  it.each([
    [200, 'HTTP 200: delivered'],
    [101, 'HTTP 101: informational status is not a final answer'],
    [404, 'HTTP 404: the endpoint was not found; check the URL'],
    [410, 'HTTP 410: the endpoint is gone; update the URL'],
    [429, 'HTTP 429: rate limited by the receiver'],
    [500, 'HTTP 500: server error'],
    [599, 'HTTP 599: server error'],
    [0, 'HTTP 0: not a valid HTTP status'],
    [600, 'HTTP 600: not a valid HTTP status'],
    [Number.NaN, 'HTTP NaN: not a valid HTTP status'],
  ])('describes %p as %p', (status, message) => {
    expect(describeHttpOutcome(status)).toBe(message);
  });

  it('gives every status a non-empty message prefixed with the status', () => {
    for (const status of [...statusesBetween(90, 610), -1, 12345]) {
      const message = describeHttpOutcome(status);
      expect(message.startsWith(`HTTP ${status}: `)).toBe(true);
      expect(message.length).toBeGreaterThan(`HTTP ${status}: `.length);
    }
  });
});
