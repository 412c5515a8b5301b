import type { HttpResult } from '../../common/net/http-client';
import { utf8Prefix } from '../../common/net/http-client';
import { classifyHttpStatus, describeHttpOutcome } from '../../retry/classify';
import { serverRequestedDelayMs } from '../../retry/retry-after';
import type { DeliveryJob, DeliveryOutcome } from '../connector.interface';
import { NO_OUTCOME_DETAILS } from '../connector.interface';
import { networkOutcome, redactSecrets, responseExcerpt } from '../outcome-kit';
import { NEWEST_LINKEDIN_VERSION } from '../../config/linkedin-versions';

export interface LinkedInOutcomeContext {
  /** What the call was for, in the message: "creating the post", "uploading image 2". */
  step: string;
  now: Date;
  apiVersion: string;
  previousAttempt: DeliveryJob['previousAttempt'];
  /** Tokens and the client secret: they never appear in an excerpt or a message. */
  secrets: readonly string[];
  excerptBytes: number;
  /** host[:port] of the endpoint called, for network-failure messages. */
  host: string;
  connectTimeoutMs: number;
  totalTimeoutMs: number;
}

const base = NO_OUTCOME_DETAILS;

/** LinkedIn's error body: `{ message, serviceErrorCode, status, code?, errorDetails? }` (LinkedIn's error-handling guide). */
interface LinkedInErrorBody {
  message?: unknown;
  code?: unknown;
  errorDetails?: { inputErrors?: { code?: unknown; description?: unknown }[] };
}

function parseBody(text: string): LinkedInErrorBody {
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null ? v : {};
  } catch {
    return {};
  }
}

export const SHARE_URN = /urn:li:(?:share|ugcPost|activity):\d+/;

/** The public address of a post (LinkedIn's feed URL for its URN). */
export function postUrl(urn: string): string {
  return `https://www.linkedin.com/feed/update/${urn}/`;
}

/**
 * True when the previous attempt may have created the post without Herald hearing back: it
 * failed transiently with no answer (a reset or a timeout after sending), or with a 5xx (the
 * post may have been committed before the error). A 429 or any other answer is not ambiguous:
 * LinkedIn refused before doing anything.
 */
export function previousWasAmbiguous(previous: DeliveryJob['previousAttempt']): boolean {
  if (previous === null || previous.errorClass !== 'transient') return false;
  return previous.httpStatus === null || previous.httpStatus >= 500;
}

function isDuplicate(body: LinkedInErrorBody): boolean {
  return (body.errorDetails?.inputErrors ?? []).some((e) => e.code === 'DUPLICATE_POST') || body.code === 'DUPLICATE_POST';
}

/**
 * Maps one LinkedIn answer (or network failure) onto Herald's classes:
 * 201 with `x-restli-id` → success; 401/403 → auth (the connector refreshes once before
 * reporting a 401); 422 DUPLICATE_POST → success with the URN from the message after an
 * ambiguous attempt, else permanent; 426 NONEXISTENT_VERSION → permanent, telling the operator
 * which setting to change; 429 → transient (LinkedIn documents no Retry-After; one is honoured
 * if present); 5xx and network failures → transient, a refused (private) address permanent
 * (outcome-kit.ts). Pure.
 */
export function linkedinOutcome(result: HttpResult, ctx: LinkedInOutcomeContext): DeliveryOutcome {
  if (result.kind === 'network_error') return networkOutcome(result, ctx, ctx.step);
  const { status, headers } = result;
  const bodyText = utf8Prefix(result.body, result.body.length);
  const body = parseBody(bodyText);
  const said = typeof body.message === 'string' ? `: ${redactSecrets(body.message.slice(0, 300), ctx.secrets)}` : '';
  const common = { ...base, httpStatus: status, responseExcerpt: responseExcerpt(bodyText, ctx.secrets, ctx.excerptBytes) };
  if (status >= 200 && status <= 299) {
    const id = headers['x-restli-id'];
    const urn = (Array.isArray(id) ? id[0] : id) ?? null;
    return { ...common, errorClass: 'success', remoteId: urn, remoteUrl: urn ? postUrl(urn) : null };
  }
  if (status === 422 && isDuplicate(body)) {
    const urn = typeof body.message === 'string' ? (SHARE_URN.exec(body.message)?.[0] ?? null) : null;
    if (previousWasAmbiguous(ctx.previousAttempt)) {
      return {
        ...common,
        errorClass: 'success',
        remoteId: urn,
        remoteUrl: urn ? postUrl(urn) : null,
        warnings: [
          `LinkedIn answered 422 DUPLICATE_POST${urn ? ` (${urn})` : ''} after an attempt whose answer was lost: that attempt published the post`,
        ],
      };
    }
    return {
      ...common,
      errorClass: 'permanent',
      message: `LinkedIn refused the post as a duplicate of ${urn ?? 'an earlier post'}: the same text was already published (LinkedIn refuses repeats for a while, even after a deletion); edit the text to post again`,
    };
  }
  if (status === 426 || body.code === 'NONEXISTENT_VERSION') {
    return {
      ...common,
      errorClass: 'permanent',
      message: `LinkedIn no longer serves API version ${ctx.apiVersion} (426 NONEXISTENT_VERSION${said}): set LINKEDIN_VERSION to a version LinkedIn still serves (the newest this Herald knows is ${NEWEST_LINKEDIN_VERSION}), restart Herald, then requeue this job from the dead-letter queue`,
    };
  }
  if (status === 429) {
    return {
      ...common,
      errorClass: 'transient',
      serverDelayMs: serverRequestedDelayMs(headers, ctx.now),
      message: `rate limited by LinkedIn while ${ctx.step} (daily quotas reset at midnight UTC)`,
    };
  }
  if (status === 401) {
    return {
      ...common,
      errorClass: 'auth',
      message: `LinkedIn rejected the access token (expired or revoked) while ${ctx.step}; reconnect the account`,
    };
  }
  if (status === 403) {
    return {
      ...common,
      errorClass: 'auth',
      message: `LinkedIn refused ${ctx.step}${said}: the token needs w_member_social (or w_organization_social and a page admin role for an organization), for this authorUrn`,
    };
  }
  return {
    ...common,
    errorClass: classifyHttpStatus(status),
    message: `${describeHttpOutcome(status)} from LinkedIn while ${ctx.step}${said}`,
  };
}
