import type { Sql } from '../../database/db';
import type { EventDeliveryRow } from '../job-reads.types';

/**
 * An event endpoint's deliveries (jobs of an event: docs/events.md), newest first, through the
 * partial index job_payloads_event_deliveries (account_id, created_at DESC); each with its last
 * attempt's answer and time (the job's state row holds them) for the page and the API; or the
 * one delivery `jobId` when given.
 */
export function eventDeliveriesOf(
  q: Sql,
  workspaceId: string,
  accountId: string,
  limit: number,
  jobId: string | null = null,
): Promise<EventDeliveryRow[]> {
  return q.query(
    `SELECT j.id, j.event_id AS "eventId", j.event_type AS "eventType", j.status, j.attempt_count AS "attemptCount",
            j.last_http_status AS "lastHttpStatus", j.last_network_error AS "lastNetworkError", j.error_class AS "errorClass",
            j.last_error AS "lastError", j.dead_reason AS "deadReason", j.run_at AS "runAt", j.created_at AS "createdAt",
            j.updated_at AS "updatedAt", j.finished_at AS "finishedAt"
     FROM jobs j
     WHERE j.workspace_id = $1 AND j.account_id = $2 AND j.event_id IS NOT NULL AND ($4::uuid IS NULL OR j.id = $4)
     ORDER BY j.created_at DESC, j.id DESC LIMIT $3`,
    [workspaceId, accountId, limit, jobId],
  );
}
