import { Injectable } from '@nestjs/common';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

/**
 * The review page's limits (docs/operations-security.md, "The client review page"), per Herald
 * process, in memory (rate-limiter-flexible): the page has no login, so its limits are per
 * client address (TRUST_PROXY decides which address that is) and, for answers, per link too.
 *
 * - Every request (showing the page, sending an answer): 60 a minute per client address. A
 *   person reading and answering makes a handful; a script trying tokens gets 429 at the 61st.
 * - Answers (comments, approvals, requests for changes): 20 per 10 minutes per client address,
 *   and 100 an hour per link, whoever sends them: a link passed around cannot be used to bury
 *   the team in comments.
 *
 * In memory per process: with N processes behind a balancer a client gets at most N times these
 * (the counts are not shared; the login throttle's are, in PostgreSQL, because it guards secrets).
 */
export const REVIEW_LIMITS = {
  requests: { points: 60, duration: 60 },
  answersPerClient: { points: 20, duration: 600 },
  answersPerLink: { points: 100, duration: 3600 },
} as const;

export type LimitOutcome = { ok: true } | { ok: false; retryAfterSeconds: number };

@Injectable()
export class ReviewRateLimit {
  private readonly requests = new RateLimiterMemory({ keyPrefix: 'review-requests', ...REVIEW_LIMITS.requests });
  private readonly answersPerClient = new RateLimiterMemory({ keyPrefix: 'review-answers', ...REVIEW_LIMITS.answersPerClient });
  private readonly answersPerLink = new RateLimiterMemory({ keyPrefix: 'review-link-answers', ...REVIEW_LIMITS.answersPerLink });

  /** One request of `client` (its address). */
  request(client: string): Promise<LimitOutcome> {
    return take(this.requests, client);
  }

  /** One answer of `client` through the link `linkId`. */
  async answer(client: string, linkId: string): Promise<LimitOutcome> {
    const byClient = await take(this.answersPerClient, client);
    if (!byClient.ok) return byClient;
    return take(this.answersPerLink, linkId);
  }
}

async function take(limiter: RateLimiterMemory, key: string): Promise<LimitOutcome> {
  try {
    await limiter.consume(key, 1);
    return { ok: true };
  } catch (err) {
    if (err instanceof RateLimiterRes) return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(err.msBeforeNext / 1000)) };
    throw err;
  }
}
