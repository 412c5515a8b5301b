import type { HttpNetworkError, HttpResult } from '../../common/net/http-client';
import { linkedinOutcome, LinkedInOutcomeContext, previousWasAmbiguous } from './linkedin-outcome';
import { NEWEST_LINKEDIN_VERSION } from '../../config/linkedin-versions';

const ctx = (over: Partial<LinkedInOutcomeContext> = {}): LinkedInOutcomeContext => ({
  step: 'creating the post',
  now: new Date('2026-12-01T00:00:00Z'),
  apiVersion: '202510',
  previousAttempt: null,
  secrets: ['AQVsecrettoken'],
  excerptBytes: 2048,
  host: 'api.linkedin.com',
  connectTimeoutMs: 5_000,
  totalTimeoutMs: 20_000,
  ...over,
});
const res = (status: number, body: unknown = '', headers: Record<string, string> = {}): HttpResult => ({
  kind: 'response',
  status,
  headers,
  body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body), 'utf8'),
  cut: null,
  latencyMs: 3,
});
const failed = (code: string, message = code): HttpNetworkError => ({ kind: 'network_error', code, message, latencyMs: 3, sent: true });
const DUPLICATE = {
  errorDetailType: 'com.linkedin.common.error.BadRequest',
  message: 'Unprocessable Entity: Content is a duplicate of urn:li:share:7123456789012345678',
  errorDetails: { inputErrors: [{ description: 'Duplicate post is detected', code: 'DUPLICATE_POST' }] },
  status: 422,
};
const lost = { errorClass: 'transient' as const, networkError: 'ECONNRESET', httpStatus: null };

describe('linkedinOutcome', () => {
  it('201 is success with the URN from x-restli-id', () => {
    const o = linkedinOutcome(res(201, '', { 'x-restli-id': 'urn:li:share:1' }), ctx());
    expect(o).toMatchObject({
      errorClass: 'success',
      remoteId: 'urn:li:share:1',
      remoteUrl: 'https://www.linkedin.com/feed/update/urn:li:share:1/',
    });
  });

  it('422 DUPLICATE_POST after an ambiguous attempt is success with the URN from the message', () => {
    const o = linkedinOutcome(res(422, DUPLICATE), ctx({ previousAttempt: lost }));
    expect(o).toMatchObject({ errorClass: 'success', httpStatus: 422, remoteId: 'urn:li:share:7123456789012345678' });
    expect(o.warnings?.[0]).toMatch(/that attempt published the post/);
  });

  it.each([
    ['a first attempt', null],
    ['after a 429 (refused before anything was done)', { errorClass: 'transient' as const, networkError: null, httpStatus: 429 }],
    ['after a permanent failure', { errorClass: 'permanent' as const, networkError: null, httpStatus: 400 }],
  ])('422 DUPLICATE_POST on %s is permanent', (_n, previousAttempt) => {
    const o = linkedinOutcome(res(422, DUPLICATE), ctx({ previousAttempt }));
    expect(o.errorClass).toBe('permanent');
    expect(o.message).toMatch(/duplicate of urn:li:share:7123456789012345678/);
  });

  it('426 NONEXISTENT_VERSION is permanent and names the setting to change', () => {
    const o = linkedinOutcome(
      res(426, { message: 'Requested version 20240701 is not active', code: 'NONEXISTENT_VERSION', status: 426 }),
      ctx(),
    );
    expect(o.errorClass).toBe('permanent');
    expect(o.message).toMatch(/API version 202510 .*set LINKEDIN_VERSION/);
    expect(o.message).toContain(`the newest this Herald knows is ${NEWEST_LINKEDIN_VERSION}`);
  });

  it('429 is transient, with no server delay unless one is sent', () => {
    expect(linkedinOutcome(res(429), ctx())).toMatchObject({ errorClass: 'transient', serverDelayMs: null });
    expect(linkedinOutcome(res(429, '', { 'retry-after': '30' }), ctx())).toMatchObject({ errorClass: 'transient', serverDelayMs: 30_000 });
  });

  it.each([[500], [502], [503], [504]])('%i is transient', (status) => {
    expect(linkedinOutcome(res(status), ctx()).errorClass).toBe('transient');
  });

  it("401 and 403 are auth; other 4xx permanent with LinkedIn's message", () => {
    expect(linkedinOutcome(res(401), ctx()).errorClass).toBe('auth');
    expect(linkedinOutcome(res(403), ctx()).errorClass).toBe('auth');
    const o = linkedinOutcome(res(400, { message: '/commentary :: too long', status: 400 }), ctx());
    expect(o).toMatchObject({ errorClass: 'permanent' });
    expect(o.message).toMatch(/\/commentary :: too long/);
  });

  it('network failures are transient and keep their code', () => {
    const o = linkedinOutcome(failed('ECONNRESET', 'socket hang up'), ctx());
    expect(o).toMatchObject({ errorClass: 'transient', networkError: 'ECONNRESET', httpStatus: null });
    expect(o.message).toBe('connection reset by api.linkedin.com before it answered (while creating the post)');
  });

  it("the attempt's deadline is transient, with its own networkError and a sentence saying so", () => {
    const o = linkedinOutcome(failed('attempt_deadline'), ctx());
    expect(o).toMatchObject({ errorClass: 'transient', networkError: 'attempt_deadline', httpStatus: null });
    expect(o.message).toMatch(/reached its deadline before api\.linkedin\.com answered/);
  });

  it('a refused (private) address is permanent, as on every platform', () => {
    const o = linkedinOutcome(
      failed(
        'EBLOCKEDADDRESS',
        'api.linkedin.example resolves to a private address; set HERALD_ALLOW_PRIVATE_URLS=true to allow private destinations',
      ),
      ctx(),
    );
    expect(o).toMatchObject({ errorClass: 'permanent', networkError: 'blocked_address' });
  });

  it('never puts a token into the excerpt', () => {
    const o = linkedinOutcome(res(400, { message: 'bad token AQVsecrettoken' }), ctx());
    expect(o.responseExcerpt).not.toContain('AQVsecrettoken');
    expect(o.message).not.toContain('AQVsecrettoken');
  });

  it("never shows a token LinkedIn echoed JSON-escaped, or one cut at the excerpt's edge", () => {
    const token = 'AQV"quoted\\token/9';
    const escaped = linkedinOutcome(res(400, { message: 'x', echo: token }), ctx({ secrets: [token] }));
    expect(escaped.responseExcerpt).not.toContain(JSON.stringify(token).slice(1, -1));
    expect(escaped.responseExcerpt).toContain('[redacted]');
    // An answer cut short (reset, deadline) in the middle of an echoed token.
    const cut = linkedinOutcome(res(500, 'echo: AQVsecrett'), ctx());
    expect(cut.responseExcerpt).toBe('echo: [redacted]');
  });
});

describe('previousWasAmbiguous', () => {
  it('is true for a transient failure without an answer or with a 5xx, false otherwise', () => {
    expect(previousWasAmbiguous(lost)).toBe(true);
    expect(previousWasAmbiguous({ errorClass: 'transient', networkError: null, httpStatus: 504 })).toBe(true);
    expect(previousWasAmbiguous({ errorClass: 'transient', networkError: null, httpStatus: 429 })).toBe(false);
    expect(previousWasAmbiguous({ errorClass: 'auth', networkError: null, httpStatus: null })).toBe(false);
    expect(previousWasAmbiguous(null)).toBe(false);
  });
});
