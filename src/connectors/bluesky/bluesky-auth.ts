import type { Agent } from '@atproto/api';

/**
 * What an attempt needs from an account's session, whichever way the account is connected: an
 * app password (BlueskySession: a session kept in the credentials, refreshed or logged in again
 * as needed) or OAuth (BlueskyOAuthSession: the library's DPoP-bound session). Posting code
 * (bluesky-post.ts, the connector's publish) only speaks to this.
 */
export interface BlueskyAuth {
  /** The account's DID and handle, after making sure there is a usable session. */
  ensure(signal?: AbortSignal): Promise<{ did: string; handle: string }>;
  /** Runs one XRPC call with a valid session (renewing it once when the PDS refuses it). */
  call<T>(fn: (agent: Agent) => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** The session's DID and handle, if there is one. */
  current(): { did: string; handle: string } | null;
}
