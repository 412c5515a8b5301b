import type { ErrorClass } from '../retry/error-class';
import type { EventType, MastodonVisibility, Provider } from '../vocabulary/vocabulary';

/**
 * How the worker tells a connector that an attempt must stop (the `signal` of `deliver`): abort
 * it with `attemptDeadlineReason()` (or let an `AbortSignal.timeout(ms)` fire) at the attempt's
 * deadline, and the attempt ends as `transient` with networkError `attempt_deadline`; a plain
 * `abort()` (shutdown) ends it as `transient` with networkError `aborted`.
 */
export { ATTEMPT_DEADLINE, attemptDeadlineReason } from '../common/net/deadline';

/** Every platform Herald publishes to (the list is src/vocabulary's, which every module may import). */
export { MASTODON_VISIBILITIES, PROVIDERS, type MastodonVisibility, type Provider } from '../vocabulary/vocabulary';

/** A media item as a connector receives it (resolved by the worker from the job's media ids). */
export interface PayloadMedia {
  id: string;
  alt: string;
  mimeType: string;
  /** pixel size, when known (Bluesky's aspectRatio) */
  width: number | null;
  height: number | null;
  byteSize: number;
  /** signed, expiring URL served by Herald (webhooks link to it) */
  url: string;
  /** The bytes, read on demand (platforms that upload blobs: Bluesky, LinkedIn). */
  read(): Promise<Buffer>;
}

/** One further part of a thread (docs/api.md "Threads"): its own text, link and images. */
export interface ThreadPart {
  text: string;
  link: string | null;
  /** media ids, in order */
  media: string[];
}

/** What one job publishes. Each job keeps its own copy, so a DLQ edit touches only that job. */
export interface JobPayload {
  text: string;
  title: string | null;
  link: string | null;
  media: string[];
  metadata: Record<string, unknown> | null;
  scheduledAt: string;
  /** The thread's further parts (1–25: a thread of 2 to 26 posts), after the first part above; absent for a single post. */
  thread?: ThreadPart[];
  /** A Mastodon target's own settings (POST /v1/posts `targets[].visibility`, `spoilerText`); absent: none given. */
  mastodon?: MastodonOptions;
  /**
   * An event endpoint's delivery (docs/events.md): the event as sent, whole; the fields above are
   * empty then. Absent for a post's job.
   */
  event?: EventEnvelope;
}

/** One of Herald's own events as an endpoint receives it: the JSON body of the delivery. */
export interface EventEnvelope {
  /** The event's id: the same on every attempt and the `webhook-id` header (receivers deduplicate on it). */
  id: string;
  type: EventType;
  /** When the change it reports happened (ISO 8601). */
  timestamp: string;
  data: Record<string, unknown>;
}

/** What a post sets for one Mastodon target: who sees it, and a content warning shown before it (every part of a thread). */
export interface MastodonOptions {
  /** null: the account's own default visibility on its instance. */
  visibility: MastodonVisibility | null;
  /** null: no content warning. */
  spoilerText: string | null;
}

/**
 * A part of a thread the platform published, as the job records it (jobs.parts): `index` 0 is
 * the first part, 1 the thread's first further part. Bluesky: the record's strong reference
 * (uri and cid). Mastodon: the status id as `uri` (the id the next part replies to), `cid` empty.
 */
export interface PublishedPart {
  index: number;
  uri: string;
  cid: string;
  url: string | null;
}

/** The parts of a payload in order: the first part, then the thread's further parts. */
export function payloadParts(payload: JobPayload): ThreadPart[] {
  return [{ text: payload.text, link: payload.link, media: payload.media }, ...(payload.thread ?? [])];
}

/** The job as the worker hands it to a connector. */
export interface DeliveryJob {
  id: string;
  /** null for an event endpoint's delivery (`payload.event`). */
  postId: string | null;
  accountId: string;
  workspaceId: string;
  /** Sent on every attempt; changes only when an edited dead job is requeued. */
  idempotencyKey: string;
  /** 1-based number of this attempt in the job's whole history. */
  attemptNumber: number;
  payload: JobPayload;
  /** The media of every part of the payload (a thread's included), resolved; look them up by id. */
  media: PayloadMedia[];
  /** The thread's parts already published by earlier attempts (jobs.parts; absent: none): never published again. */
  published?: PublishedPart[];
  /** Outcome of the previous attempt of this job, if any: LinkedIn needs it to read a 422 DUPLICATE_POST. */
  previousAttempt: { errorClass: ErrorClass | null; networkError: string | null; httpStatus: number | null } | null;
}

/** The account as the worker hands it to a connector: public config and decrypted credentials. */
export interface DeliveryAccount<Config = Record<string, unknown>, Credentials = Record<string, unknown>> {
  id: string;
  workspaceId: string;
  name: string;
  config: Config;
  credentials: Credentials;
}

/** What one attempt produced, already mapped onto Herald's outcome classes. */
export interface DeliveryOutcome {
  errorClass: ErrorClass;
  httpStatus: number | null;
  /** e.g. ECONNREFUSED, ETIMEDOUT, connect_timeout, total_timeout, attempt_deadline, aborted, blocked_address */
  networkError: string | null;
  /** For a person: why it failed (never a secret). null on success. */
  message: string | null;
  /** First bytes of the response body (bounded). */
  responseExcerpt: string | null;
  /** The wait the server asked for (Retry-After / RateLimit-Reset), in ms. */
  serverDelayMs: number | null;
  remoteId: string | null;
  remoteUrl: string | null;
  /**
   * Every part of a thread published so far, this attempt's included (recorded with the outcome,
   * success or not, so the next attempt starts after them). Absent: unchanged.
   */
  parts?: PublishedPart[];
  /** New credentials to store (a refreshed session or token), encrypted by the caller. */
  credentialsUpdate?: Record<string, unknown>;
  warnings?: string[];
}

/** Every field of an outcome but its class, empty: what connectors build their outcomes on. */
export const NO_OUTCOME_DETAILS: Readonly<Omit<DeliveryOutcome, 'errorClass'>> = {
  httpStatus: null,
  networkError: null,
  message: null,
  responseExcerpt: null,
  serverDelayMs: null,
  remoteId: null,
  remoteUrl: null,
};

/** An outcome with nothing but its class and message. */
export function bareOutcome(errorClass: ErrorClass, message: string | null): DeliveryOutcome {
  return { ...NO_OUTCOME_DETAILS, errorClass, message };
}

export interface VerifyResult {
  ok: boolean;
  message: string;
  details?: Record<string, unknown>;
  /**
   * Public config fields the check read from the platform, to store with the account (Mastodon:
   * the instance's limits and who the token posts as). Merged into the stored config; never a
   * credential.
   */
  configUpdate?: Record<string, unknown>;
}

/** The account input split into what may be shown (config) and what is encrypted (credentials). */
export interface PreparedAccount {
  config: Record<string, unknown>;
  credentials: Record<string, unknown>;
  /** Shown once in the create/rotate answer (e.g. a webhook signing secret). */
  revealOnce?: Record<string, string>;
  /** The account's name on the platform (Mastodon: its display name or handle), for an account created without a name. */
  suggestedName?: string;
}

export class ConnectorInputError extends Error {}

export interface Connector {
  readonly provider: Provider;
  /**
   * Validates the `config` of POST/PATCH /v1/accounts (throws ConnectorInputError naming the
   * field) and splits it. `previous` holds the stored credentials on a PATCH.
   */
  /**
   * `previous` are the stored credentials and `previousConfig` the stored public config on an
   * update (null on create).
   */
  prepareAccount(
    input: unknown,
    previous: Record<string, unknown> | null,
    previousConfig?: Record<string, unknown> | null,
  ): Promise<PreparedAccount>;
  /** Checks the credentials against the platform now. */
  verify(account: DeliveryAccount): Promise<VerifyResult>;
  /** New signing secret (webhooks); absent for platforms without one. */
  rotateSecret?(previous: Record<string, unknown>): PreparedAccount;
  /**
   * One attempt. Never throws for platform or network failures: they are outcomes. Every HTTP
   * call of the attempt stops at min(its own total timeout, `signal`): see ATTEMPT_DEADLINE above.
   */
  deliver(job: DeliveryJob, account: DeliveryAccount, signal: AbortSignal): Promise<DeliveryOutcome>;
}

export const CONNECTORS = Symbol('CONNECTORS');
