import { createHash, timingSafeEqual } from 'node:crypto';
import { bearerToken } from '../workspaces/api-key.util';

export type MetricsAccess = 'allowed' | 'disabled' | 'denied';

/** SHA-256 of the configured token: compared in constant time whatever the sent token's length. */
export function metricsTokenHash(token: string | null): Buffer | null {
  return token === null ? null : createHash('sha256').update(token, 'utf8').digest();
}

/**
 * Who may scrape /metrics. Without METRICS_TOKEN nobody: the page names every route, the queue's
 * depth and the process's internals, which are an operator's business, not the Internet's
 * (and a public /metrics is the first thing scanners look for). With it, exactly the requests
 * that carry `Authorization: Bearer <token>`, which Prometheus sends with
 * `authorization: { credentials_file: … }` in its scrape config.
 */
export function metricsAccess(expectedHash: Buffer | null, authorization: string | undefined): MetricsAccess {
  if (expectedHash === null) return 'disabled';
  const sent = bearerToken(authorization);
  if (sent === null) return 'denied';
  return timingSafeEqual(createHash('sha256').update(sent, 'utf8').digest(), expectedHash) ? 'allowed' : 'denied';
}
