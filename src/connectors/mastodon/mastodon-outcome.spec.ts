import fc from 'fast-check';
import type { HttpNetworkError, HttpResult } from '../../common/net/http-client';
import { mastodonOutcome, MastodonOutcomeContext } from './mastodon-outcome';

const TOKEN = 'mastodon-token-6f1c2b9a';
const NOW = new Date('2026-12-01T10:00:00Z');

const ctx = (over: Partial<MastodonOutcomeContext> = {}): MastodonOutcomeContext => ({
  step: 'creating the status',
  now: NOW,
  secrets: [TOKEN],
  excerptBytes: 2048,
  host: 'mastodon.example',
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
  latencyMs: 4,
});
const failed = (code: string, sent = true): HttpNetworkError => ({ kind: 'network_error', code, message: code, latencyMs: 4, sent });

describe('mastodonOutcome', () => {
  it('2xx is success', () => {
    expect(mastodonOutcome(res(200, { id: '1' }), ctx())).toMatchObject({ errorClass: 'success', httpStatus: 200 });
  });

  it("422 is permanent and carries the instance's own message", () => {
    const o = mastodonOutcome(res(422, { error: 'Validation failed: Text character limit of 500 exceeded' }), ctx());
    expect(o.errorClass).toBe('permanent');
    expect(o.message).toBe('mastodon.example (Mastodon) refused the status: Validation failed: Text character limit of 500 exceeded');
  });

  it('a 422 without a reason still says it was refused', () => {
    expect(mastodonOutcome(res(422, 'oops'), ctx()).message).toMatch(/refused the status \(422, without a reason\)$/);
  });

  it('401 is auth: the account needs re-authentication', () => {
    const o = mastodonOutcome(res(401, { error: 'The access token is invalid' }), ctx());
    expect(o.errorClass).toBe('auth');
    expect(o.message).toMatch(/refused the access token while creating the status: The access token is invalid .*reconnect the account$/);
  });

  it('403 is auth and names the scopes the token needs', () => {
    const o = mastodonOutcome(res(403, { error: 'This action is outside the authorized scopes' }), ctx({ step: 'uploading image 1' }));
    expect(o.errorClass).toBe('auth');
    expect(o.message).toMatch(/write:statuses and write:media/);
  });

  it('429 waits until X-RateLimit-Reset (an ISO 8601 time)', () => {
    const o = mastodonOutcome(
      res(
        429,
        { error: 'Too many requests' },
        { 'x-ratelimit-limit': '300', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '2026-12-01T10:04:30.000Z' },
      ),
      ctx(),
    );
    expect(o).toMatchObject({ errorClass: 'transient', serverDelayMs: 270_000, httpStatus: 429 });
    expect(o.message).toMatch(/rate limited by mastodon\.example/);
  });

  it('429 without a reset asks for no particular wait (the backoff decides)', () => {
    expect(mastodonOutcome(res(429), ctx())).toMatchObject({ errorClass: 'transient', serverDelayMs: null });
  });

  it.each([500, 502, 503, 504, 408, 425])('%i is transient', (status) => {
    expect(mastodonOutcome(res(status), ctx()).errorClass).toBe('transient');
  });

  it('a cut connection is transient and keeps its code', () => {
    const o = mastodonOutcome(failed('ECONNRESET'), ctx({ step: 'creating part 2 of 3' }));
    expect(o).toMatchObject({ errorClass: 'transient', networkError: 'ECONNRESET', httpStatus: null });
    expect(o.message).toBe('connection reset by mastodon.example before it answered (while creating part 2 of 3)');
  });

  it('a refused private address is permanent, as on every platform', () => {
    const o = mastodonOutcome(failed('EBLOCKEDADDRESS', false), ctx());
    expect(o).toMatchObject({ errorClass: 'permanent', networkError: 'blocked_address' });
  });

  it('404 on a reply is permanent and says the previous part was deleted', () => {
    const o = mastodonOutcome(
      res(404, { error: 'Record not found' }),
      ctx({ step: 'creating part 3 of 3', replyTo: { id: '1100', label: 'part 2' } }),
    );
    expect(o.errorClass).toBe('permanent');
    expect(o.message).toBe(
      'part 2 (status 1100) is no longer on mastodon.example: it was deleted, so part 3 of 3 cannot reply to it. Post the rest as a new thread',
    );
  });

  it('a 404 elsewhere is permanent with the instance message', () => {
    const o = mastodonOutcome(res(404, { error: 'Record not found' }), ctx({ step: 'checking image 1' }));
    expect(o.errorClass).toBe('permanent');
    expect(o.message).toMatch(/HTTP 404.*Record not found/);
  });

  it('3xx and other 4xx are permanent', () => {
    expect(mastodonOutcome(res(302), ctx()).errorClass).toBe('permanent');
    expect(mastodonOutcome(res(400, { error: 'bad' }), ctx()).errorClass).toBe('permanent');
    expect(mastodonOutcome(res(413), ctx()).errorClass).toBe('permanent');
  });

  it('never shows the token, in the message or the excerpt, whatever the instance echoes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 200, max: 599 }), fc.string({ maxLength: 40 }), fc.string({ maxLength: 40 }), (status, a, b) => {
        const o = mastodonOutcome(res(status, { error: `${a}${TOKEN}${b}`, echo: TOKEN }), ctx());
        expect(o.message ?? '').not.toContain(TOKEN);
        expect(o.responseExcerpt ?? '').not.toContain(TOKEN);
      }),
      { numRuns: 200 },
    );
  });
});
