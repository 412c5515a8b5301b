/**
 * The names the modules share: the platforms, a job's states and an outcome's classes. Each list
 * is written once, here, as a tuple with its type drawn from it; the modules that own the
 * meaning (connectors, queue, retry) re-export them, and the API's schemas, the page's filters
 * and the database's CHECK constraints list the same values.
 *
 * This file imports nothing, so every module, the pure leaves included (retry), may import it
 * without taking on anything else.
 */

/** Every platform Herald publishes to. Another one is added here and in connectors/. */
export const PROVIDERS = ['bluesky', 'linkedin', 'mastodon', 'webhook'] as const;
export type Provider = (typeof PROVIDERS)[number];

/**
 * Who sees a Mastodon status (`visibility` of POST /api/v1/statuses): everyone and the public
 * timelines; everyone but not the public timelines; followers only; the people it mentions only.
 * A post's Mastodon targets take one (POST /v1/posts `targets[].visibility`).
 */
export const MASTODON_VISIBILITIES = ['public', 'unlisted', 'private', 'direct'] as const;
export type MastodonVisibility = (typeof MASTODON_VISIBILITIES)[number];

/**
 * A job's state (the `jobs.status` column; its CHECK constraint lists the same values). Which
 * operation moves a job from which state to which is queue/job-lifecycle.ts's table.
 */
export const JOB_STATUSES = ['scheduled', 'in_progress', 'succeeded', 'paused', 'dead', 'cancelled', 'discarded'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/**
 * The five outcome classes (docs/delivery.md "Classifying an outcome"). Every attempt's result (an HTTP status, a network error,
 * or a payload that could not be built) is mapped onto exactly one of them before the retry
 * policy and the circuit breaker look at it; connectors translate their platform's own signals
 * (Bluesky `400 ExpiredToken`, LinkedIn `422 DUPLICATE_POST`, ...) into these classes first.
 *
 * - `success`: delivered.
 * - `transient`: the receiver (or the path to it) is unhealthy right now; retry with backoff.
 * - `auth`: the credentials are no longer accepted; retrying cannot help until a person re-auths.
 * - `permanent`: the receiver understood and refused this request; retrying sends the same refusal.
 * - `poison`: Herald could not even build or sign the payload; nothing was sent.
 */
export const ERROR_CLASSES = ['success', 'transient', 'auth', 'permanent', 'poison'] as const;
export type ErrorClass = (typeof ERROR_CLASSES)[number];

/**
 * Herald's own events, which a workspace's event endpoints subscribe to (docs/events.md lists
 * each one's shape; job_payloads' CHECK constraint lists the same names).
 */
export const EVENT_TYPES = [
  'post.scheduled',
  'post.published',
  'post.failed',
  'post.approval_requested',
  'post.approved',
  'post.rejected',
  'account.needs_reauth',
  'account.recovered',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
