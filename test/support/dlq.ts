import { randomUUID } from 'node:crypto';
import { withClient } from './database';

/**
 * Factories for dead-letter tests without a worker: jobs made dead the way the engine leaves
 * them (status, dead reason, error class, last error, finished_at and one attempt row).
 */

export interface DeathOptions {
  reason?: 'max_attempts' | 'permanent' | 'poison' | 'expired';
  errorClass?: 'transient' | 'auth' | 'permanent' | 'poison';
  lastError?: string;
  httpStatus?: number | null;
  responseExcerpt?: string | null;
  /** when it died (default: now) */
  at?: Date;
}

/** Makes every job of `jobIds` dead in one statement (they share one death time unless `at`). */
export async function killJobs(databaseUrl: string, jobIds: string[], o: DeathOptions = {}): Promise<void> {
  const reason = o.reason ?? 'permanent';
  const errorClass = o.errorClass ?? 'permanent';
  const lastError = o.lastError ?? 'HTTP 400: the receiver rejected the payload';
  await withClient(databaseUrl, async (db) => {
    await db.query(
      `WITH d AS (
         UPDATE job_state SET status = 'dead', dead_reason = $2, error_class = $3, last_error = $4,
                attempt_count = attempt_count + 1, finished_at = coalesce($7::timestamptz, now()), updated_at = now()
         WHERE job_id = ANY($1::uuid[]) RETURNING job_id AS id, attempt_count, finished_at)
       INSERT INTO attempts (job_id, number, started_at, finished_at, http_status, error_class, decision, latency_ms,
                             response_excerpt, message, idempotency_key, worker)
       SELECT d.id, d.attempt_count, d.finished_at - interval '12 milliseconds', d.finished_at, $5, $3, 'dead', 12, $6, $4, p.idempotency_key, 'test'
       FROM d JOIN job_payloads p ON p.id = d.id`,
      [
        jobIds,
        reason,
        errorClass,
        lastError,
        o.httpStatus === undefined ? 400 : o.httpStatus,
        o.responseExcerpt ?? '{"error":"bad"}',
        o.at ?? null,
      ],
    );
  });
}

/**
 * An account of a provider whose connector may not exist in this build (its credentials are
 * never opened: no worker runs in these tests).
 */
export async function insertAccount(
  databaseUrl: string,
  workspaceId: string,
  provider: 'bluesky' | 'linkedin' | 'webhook',
  name: string = provider,
): Promise<string> {
  const id = randomUUID();
  await withClient(databaseUrl, (db) =>
    db.query(`INSERT INTO accounts (id, workspace_id, provider, name, credentials) VALUES ($1, $2, $3, $4, 'unused')`, [
      id,
      workspaceId,
      provider,
      name,
    ]),
  );
  return id;
}

export async function setAccountStatus(
  databaseUrl: string,
  accountId: string,
  status: 'active' | 'needs_reauth' | 'disabled',
  reason: string | null = null,
): Promise<void> {
  await withClient(databaseUrl, (db) =>
    db.query(`UPDATE accounts SET status = $2, status_reason = $3 WHERE id = $1`, [accountId, status, reason]),
  );
}
