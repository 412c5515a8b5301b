import type { HttpNetworkError, HttpResponseResult } from '../../common/net/http-client';
import { BLOCKED_ADDRESS_NETWORK_ERROR } from '../outcome-kit';
import { OutcomeContext, readRemoteRef, shownLocation, webhookOutcome } from './webhook-outcome';

const NOW = new Date('2026-11-29T12:00:00Z');
const SECRET = 'whsec_c2VjcmV0LXNpZ25pbmcta2V5LWZvci10ZXN0cw==';
const AUTH = 'Bearer blog-token-0123456789';

function ctx(overrides: Partial<OutcomeContext> = {}): OutcomeContext {
  return {
    url: new URL('https://blog.example.com/hooks/herald'),
    now: NOW,
    secrets: [SECRET, AUTH],
    excerptBytes: 2048,
    connectTimeoutMs: 5_000,
    totalTimeoutMs: 20_000,
    ...overrides,
  };
}

function response(status: number, body = '', headers: HttpResponseResult['headers'] = {}): HttpResponseResult {
  return { kind: 'response', status, headers, body: Buffer.from(body, 'utf8'), cut: null, latencyMs: 12 };
}

function networkError(code: string, sent = false, message = `some ${code}`): HttpNetworkError {
  return { kind: 'network_error', code, message, latencyMs: 5, sent };
}

describe('webhookOutcome for answers', () => {
  it('records the published URL and id of a 2xx JSON answer', () => {
    const outcome = webhookOutcome(response(201, '{"url":"https://blog.example.com/p/hello","id":"p-1"}'), ctx());
    expect(outcome).toEqual({
      errorClass: 'success',
      httpStatus: 201,
      networkError: null,
      message: null,
      responseExcerpt: '{"url":"https://blog.example.com/p/hello","id":"p-1"}',
      serverDelayMs: null,
      remoteId: 'p-1',
      remoteUrl: 'https://blog.example.com/p/hello',
    });
  });

  it('counts a 2xx with an empty or non-JSON body as delivered without a remote URL', () => {
    expect(webhookOutcome(response(204), ctx())).toMatchObject({ errorClass: 'success', remoteUrl: null, responseExcerpt: null });
    expect(webhookOutcome(response(200, 'OK'), ctx())).toMatchObject({ errorClass: 'success', remoteUrl: null });
  });

  it('honours a wait asked for on any answer, a 503 with Retry-After: 3 included', () => {
    const outcome = webhookOutcome(response(503, 'busy', { 'retry-after': '3' }), ctx());
    expect(outcome).toMatchObject({ errorClass: 'transient', httpStatus: 503, serverDelayMs: 3000 });
    expect(outcome.message).toBe('HTTP 503: server unavailable');
    expect(webhookOutcome(response(202, '', { 'retry-after': '7' }), ctx()).serverDelayMs).toBe(7000);
  });

  it.each([
    [401, 'auth'],
    [403, 'auth'],
    [400, 'permanent'],
    [404, 'permanent'],
    [410, 'permanent'],
    [422, 'permanent'],
    [408, 'transient'],
    [429, 'transient'],
    [500, 'transient'],
    [502, 'transient'],
  ])('classifies HTTP %i as %s', (status, errorClass) => {
    const outcome = webhookOutcome(response(status), ctx());
    expect(outcome.errorClass).toBe(errorClass);
    expect(outcome.message).toMatch(new RegExp(`^HTTP ${status}: `));
  });

  it('explains a redirect and names where it points, without the query string', () => {
    const outcome = webhookOutcome(response(302, '', { location: 'https://login.example.com/sso?token=abc123&next=%2F#frag' }), ctx());
    expect(outcome.errorClass).toBe('permanent');
    expect(outcome.message).toBe(
      'HTTP 302: the endpoint redirected (redirects are not followed); update the URL (Location: https://login.example.com/sso)',
    );
    expect(outcome.message).not.toContain('abc123');
  });

  it('explains a redirect without a Location too', () => {
    expect(webhookOutcome(response(301), ctx()).message).toBe(
      'HTTP 301: the endpoint redirected (redirects are not followed); update the URL',
    );
  });

  it('never shows a secret or a custom header value that the receiver echoed', () => {
    const body = JSON.stringify({ error: 'bad', headers: { authorization: AUTH }, secret: SECRET, raw: SECRET.slice(6) });
    const outcome = webhookOutcome(response(400, body), ctx({ secrets: [SECRET, SECRET.slice(6), AUTH] }));
    expect(outcome.responseExcerpt).not.toContain('blog-token');
    expect(outcome.responseExcerpt).not.toContain(SECRET.slice(6, 20));
    expect(outcome.responseExcerpt).toContain('[redacted]');
    expect(outcome.message).not.toContain('blog-token');
  });

  it('bounds the excerpt to excerptBytes even when the body is longer', () => {
    const outcome = webhookOutcome(response(500, 'é'.repeat(5000)), ctx({ excerptBytes: 101 }));
    expect(Buffer.byteLength(outcome.responseExcerpt ?? '')).toBe(100);
  });
});

describe('webhookOutcome for network failures', () => {
  it.each([
    ['ECONNREFUSED', false, 'connection refused by blog.example.com'],
    ['ECONNRESET', true, 'connection reset by blog.example.com before it answered'],
    ['ENOTFOUND', false, 'host blog.example.com not found (DNS)'],
    ['EAI_AGAIN', false, 'DNS lookup of blog.example.com failed temporarily'],
    ['connect_timeout', false, 'could not connect to blog.example.com within 5 s'],
    ['total_timeout', true, 'no complete answer from blog.example.com within 20 s'],
    ['attempt_deadline', true, 'the attempt reached its deadline before blog.example.com answered; it is retried like a timeout'],
    ['aborted', true, 'the attempt was stopped by Herald (shutting down) before blog.example.com answered'],
    ['CERT_HAS_EXPIRED', false, 'TLS connection to blog.example.com failed (CERT_HAS_EXPIRED)'],
    ['HPE_INVALID_CONSTANT', true, 'blog.example.com answered with something that is not valid HTTP (HPE_INVALID_CONSTANT)'],
    ['EWHATEVER', false, 'network error talking to blog.example.com (EWHATEVER)'],
  ])('maps %s to a transient outcome: "%s"', (code, sent, message) => {
    expect(webhookOutcome(networkError(code, sent), ctx())).toEqual({
      errorClass: 'transient',
      httpStatus: null,
      networkError: code,
      message,
      responseExcerpt: null,
      serverDelayMs: null,
      remoteId: null,
      remoteUrl: null,
    });
  });

  it('makes a blocked address permanent and says how to allow it', () => {
    const outcome = webhookOutcome(
      networkError(
        'EBLOCKEDADDRESS',
        false,
        'localhost resolves to a loopback address; set HERALD_ALLOW_PRIVATE_URLS=true to allow private destinations',
      ),
      ctx({ url: new URL('http://localhost:8080/hook') }),
    );
    expect(outcome.errorClass).toBe('permanent');
    expect(outcome.networkError).toBe(BLOCKED_ADDRESS_NETWORK_ERROR);
    expect(outcome.message).toContain('HERALD_ALLOW_PRIVATE_URLS=true');
  });

  it('shows short timeouts in fractions of a second', () => {
    expect(webhookOutcome(networkError('total_timeout'), ctx({ totalTimeoutMs: 300 })).message).toBe(
      'no complete answer from blog.example.com within 0.3 s',
    );
  });
});

describe('helpers', () => {
  it('reads remote refs only from JSON objects with http(s) URLs', () => {
    expect(readRemoteRef('{"url":"https://x.example/p","id":7}')).toEqual({ remoteUrl: 'https://x.example/p', remoteId: '7' });
    expect(readRemoteRef('{"url":"javascript:alert(1)"}')).toEqual({ remoteUrl: null, remoteId: null });
    expect(readRemoteRef('{"url":"/relative"}')).toEqual({ remoteUrl: null, remoteId: null });
    expect(readRemoteRef('["https://x.example"]')).toEqual({ remoteUrl: null, remoteId: null });
    expect(readRemoteRef('{"url": 5, "id": {"a": 1}}')).toEqual({ remoteUrl: null, remoteId: null });
    expect(readRemoteRef('{truncated')).toEqual({ remoteUrl: null, remoteId: null });
  });

  it('resolves a relative Location and drops credentials, query and fragment', () => {
    const base = new URL('https://blog.example.com/hooks/herald');
    expect(shownLocation('/login?next=1', base)).toBe('https://blog.example.com/login');
    expect(shownLocation('https://u:p@other.example/x#y', base)).toBe('https://other.example/x');
    expect(shownLocation('javascript:alert(1)', base)).toBeNull();
    expect(shownLocation(undefined, base)).toBeNull();
  });
});
