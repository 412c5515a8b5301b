import { XRPCError } from '@atproto/api';
import { OAuthResponseError, TokenInvalidError, TokenRefreshError, TokenRevokedError } from '@atproto/oauth-client-node';
import { OutboundError } from '../../../common/net/deadline';
import type { BlueskyOutcomeContext } from '../bluesky-outcome';
import { blueskyOAuthErrorOutcome } from './bluesky-oauth-session';
import { RefreshLockTimeout } from './bluesky-oauth-stores';

const ctx: BlueskyOutcomeContext = {
  host: 'pds.example',
  now: new Date('2026-12-01T10:00:00Z'),
  excerptBytes: 512,
  secrets: [],
  connectTimeoutMs: 1000,
  totalTimeoutMs: 5000,
};

const oauthAnswer = (status: number, body: Record<string, string>) =>
  new OAuthResponseError(new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } }), body);

describe('blueskyOAuthErrorOutcome', () => {
  it.each([
    ['a refused refresh', new TokenRefreshError('did:plc:a', 'Refresh token replayed')],
    ['a revoked session', new TokenRevokedError('did:plc:a')],
    ['a token the PDS refuses even fresh', new TokenInvalidError('did:plc:a')],
  ])('makes %s an auth failure that says to reconnect with Bluesky', (_what, err) => {
    const outcome = blueskyOAuthErrorOutcome(err, 'creating the post', ctx);
    expect(outcome.errorClass).toBe('auth');
    expect(outcome.message).toMatch(/^pds\.example ended Herald's OAuth session while creating the post \(.+\); reconnect it with Bluesky/);
  });

  it('finds the ended session behind the XRPC error the agent wraps it in', () => {
    const wrapped = XRPCError.from(new TokenRefreshError('did:plc:a', 'The session was deleted by another process'));
    expect(blueskyOAuthErrorOutcome(wrapped, 'uploading image 1', ctx)).toMatchObject({ errorClass: 'auth' });
  });

  it('retries a refresh the authorization server failed (5xx, 429): the refresh token was not used up', () => {
    for (const status of [500, 503, 429]) {
      const outcome = blueskyOAuthErrorOutcome(oauthAnswer(status, { error: 'server_error' }), 'logging in', ctx);
      expect(outcome).toMatchObject({ errorClass: 'transient', httpStatus: status });
    }
  });

  it("makes another refusal of the authorization server (Herald's key no longer accepted) an auth failure", () => {
    const outcome = blueskyOAuthErrorOutcome(
      oauthAnswer(401, { error: 'invalid_client', error_description: 'Invalid client assertion' }),
      'logging in',
      ctx,
    );
    expect(outcome).toMatchObject({ errorClass: 'auth', httpStatus: 401 });
    expect(outcome.message).toContain('invalid_client: Invalid client assertion');
  });

  it('retries when another process kept the refresh lock too long', () => {
    expect(blueskyOAuthErrorOutcome(new RefreshLockTimeout('x', 90_000), 'logging in', ctx)).toMatchObject({ errorClass: 'transient' });
  });

  it("classifies the PDS's own answers as for app passwords, with the OAuth remedy", () => {
    const refused = blueskyOAuthErrorOutcome(new XRPCError(401, 'AuthenticationRequired', 'Bad token'), 'creating the post', ctx);
    expect(refused.errorClass).toBe('auth');
    expect(refused.message).toMatch(/reconnect it with Bluesky on the settings page$/);
    expect(blueskyOAuthErrorOutcome(new XRPCError(400, 'InvalidRequest', 'text too long'), 'creating the post', ctx).errorClass).toBe(
      'permanent',
    );
    const network = blueskyOAuthErrorOutcome(new OutboundError('ECONNRESET', 'socket hang up', true), 'creating the post', ctx);
    expect(network).toMatchObject({ errorClass: 'transient', networkError: 'ECONNRESET' });
  });
});
