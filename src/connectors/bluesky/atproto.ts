import type * as AtprotoApi from '@atproto/api';
import type * as AtprotoOAuth from '@atproto/oauth-client-node';

/**
 * The @atproto libraries, loaded the first time a Bluesky account needs them, not at startup:
 * `@atproto/api` carries every Bluesky lexicon and `@atproto/oauth-client-node` its JOSE and
 * identity stack, together several MB of heap and code that a process whose accounts are all
 * webhooks (or LinkedIn, Mastodon) never uses (docs/benchmarks.md, "Peak RSS"). Node caches the
 * modules: after the first call each one is a property read.
 *
 * Everything that uses a value of these packages goes through here; the other files import
 * their types only (`import type`), which the compiler erases.
 */
let api: typeof AtprotoApi | undefined;
let oauth: typeof AtprotoOAuth | undefined;

export function atprotoApi(): typeof AtprotoApi {
  // A synchronous require, not import(): sessions build their Agent in a constructor. Both
  // packages are ES modules, which Node 24 loads with require().
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  api ??= require('@atproto/api') as typeof AtprotoApi;
  return api;
}

export function atprotoOAuth(): typeof AtprotoOAuth {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  oauth ??= require('@atproto/oauth-client-node') as typeof AtprotoOAuth;
  return oauth;
}

/** Whether `err` is an answer of an XRPC server (`XRPCError` of @atproto/api, subclasses included). */
export function isXrpcError(err: unknown): err is AtprotoApi.XRPCError {
  // Only an object can be one: a string thrown by a bug does not load the library.
  return typeof err === 'object' && err !== null && err instanceof atprotoApi().XRPCError;
}
