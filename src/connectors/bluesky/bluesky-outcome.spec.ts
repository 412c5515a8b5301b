import { XRPCError } from '@atproto/api';
import { OutboundError } from '../../common/net/deadline';
import { blueskyErrorOutcome, BlueskyOutcomeContext, blueskySuccess, postUrl } from './bluesky-outcome';

const now = new Date('2026-11-29T12:00:00Z');
const ctx: BlueskyOutcomeContext = {
  host: 'bsky.social',
  now,
  excerptBytes: 512,
  secrets: ['abcd-efgh-ijkl-mnop'],
  connectTimeoutMs: 5_000,
  totalTimeoutMs: 20_000,
};

function xrpc(status: number, error: string, message: string, headers: Record<string, string> = {}): XRPCError {
  return new XRPCError(status, error, message, headers);
}

describe('blueskyErrorOutcome', () => {
  it('defers a 429 until RateLimit-Reset (epoch seconds), as PDS 0.4 sends it', () => {
    const reset = String(now.getTime() / 1000 + 120);
    const out = blueskyErrorOutcome(
      xrpc(429, 'RateLimitExceeded', 'Rate Limit Exceeded', { 'ratelimit-reset': reset, 'ratelimit-remaining': '0' }),
      'logging in',
      ctx,
    );
    expect(out).toMatchObject({ errorClass: 'transient', httpStatus: 429, serverDelayMs: 120_000 });
    expect(out.message).toBe('rate limited by bsky.social while logging in (RateLimitExceeded: Rate Limit Exceeded)');
  });

  it('honours Retry-After from newer PDS versions', () => {
    const out = blueskyErrorOutcome(xrpc(429, 'RateLimitExceeded', 'slow down', { 'retry-after': '30' }), 'creating the post', ctx);
    expect(out.serverDelayMs).toBe(30_000);
  });

  it.each([
    [400, 'ExpiredToken'],
    [400, 'InvalidToken'],
    [401, 'AuthenticationRequired'],
    [400, 'AccountTakedown'],
    [401, 'AccountDeactivated'],
    [403, 'Forbidden'],
  ])('treats %i %s (after refresh and login failed) as auth', (status, error) => {
    const out = blueskyErrorOutcome(xrpc(status, error, 'Invalid identifier or password'), 'logging in', ctx);
    expect(out.errorClass).toBe('auth');
    expect(out.message).toContain('re-enter the app password');
  });

  it('treats InvalidRequest as permanent', () => {
    const out = blueskyErrorOutcome(
      xrpc(400, 'InvalidRequest', 'Invalid app.bsky.feed.post record: Record/text must not be longer than 300 graphemes'),
      'creating the post',
      ctx,
    );
    expect(out).toMatchObject({ errorClass: 'permanent', httpStatus: 400 });
    expect(JSON.parse(out.responseExcerpt ?? '')).toEqual({ error: 'InvalidRequest', message: expect.stringContaining('300 graphemes') });
  });

  it.each([500, 502, 503, 504])('treats %i as transient', (status) => {
    expect(blueskyErrorOutcome(xrpc(status, 'InternalServerError', 'oops'), 'uploading image 1', ctx).errorClass).toBe('transient');
  });

  it('treats network failures as transient, with their code', () => {
    const wrapped = XRPCError.from(new OutboundError('ECONNRESET', 'socket hang up', true));
    const out = blueskyErrorOutcome(wrapped, 'creating the post', ctx);
    expect(out).toMatchObject({ errorClass: 'transient', networkError: 'ECONNRESET', httpStatus: null });
    expect(out.message).toBe('connection reset by bsky.social before it answered (while creating the post)');
  });

  it("ends at the attempt's deadline as transient attempt_deadline, whether a request or a wait for a login was cut", () => {
    const out = blueskyErrorOutcome(
      XRPCError.from(new OutboundError('attempt_deadline', 'the attempt reached its deadline', true)),
      'uploading image 1',
      ctx,
    );
    expect(out).toMatchObject({ errorClass: 'transient', networkError: 'attempt_deadline', httpStatus: null });
    const waiting = blueskyErrorOutcome(
      new OutboundError('attempt_deadline', 'the attempt reached its deadline', false),
      'logging in',
      ctx,
    );
    expect(waiting).toMatchObject({ errorClass: 'transient', networkError: 'attempt_deadline' });
  });

  it('refuses a blocked address permanently', () => {
    const out = blueskyErrorOutcome(XRPCError.from(new OutboundError('EBLOCKEDADDRESS', 'blocked', false)), 'logging in', ctx);
    expect(out).toMatchObject({ errorClass: 'permanent', networkError: 'blocked_address' });
  });

  it('never shows the app password', () => {
    const out = blueskyErrorOutcome(xrpc(400, 'InvalidRequest', 'bad password abcd-efgh-ijkl-mnop'), 'logging in', ctx);
    expect(JSON.stringify(out)).not.toContain('abcd-efgh-ijkl-mnop');
  });

  it('retries what it cannot read', () => {
    expect(blueskyErrorOutcome(new Error('boom'), 'creating the post', ctx)).toMatchObject({
      errorClass: 'transient',
      message: 'unexpected failure while creating the post: boom',
    });
  });
});

describe('the result of a post', () => {
  it('links to bsky.app by handle, or by DID when the handle does not verify', () => {
    expect(postUrl('alice.test', 'did:plc:abc', '3lc42wj2mm24h')).toBe('https://bsky.app/profile/alice.test/post/3lc42wj2mm24h');
    expect(postUrl('handle.invalid', 'did:plc:abc', '3lc42wj2mm24h')).toBe('https://bsky.app/profile/did:plc:abc/post/3lc42wj2mm24h');
    expect(
      blueskySuccess('at://did:plc:abc/app.bsky.feed.post/3lc42wj2mm24h', 'alice.test', 'did:plc:abc', '3lc42wj2mm24h', []),
    ).toMatchObject({
      errorClass: 'success',
      remoteId: 'at://did:plc:abc/app.bsky.feed.post/3lc42wj2mm24h',
      remoteUrl: 'https://bsky.app/profile/alice.test/post/3lc42wj2mm24h',
    });
  });
});
