import { createHash } from 'node:crypto';
import type { Sql } from '../../database/db';
import { compose, Cte, cte, join, param, raw, sql, SqlPiece, withCtes } from '../../database/statement';
import type { EventType } from '../../vocabulary/vocabulary';

/** An event whose content the caller knows (built in TypeScript), before it is fanned out. */
export interface NewEvent {
  workspaceId: string;
  id: string;
  type: EventType;
  occurredAt: Date;
  data: Record<string, unknown>;
}

/** The event CTEs for a statement to embed: `ctes` in order, and `rows`, one row per delivery written (to count them). */
export interface EnqueuedEvents {
  ctes: [Cte<'ev'>, Cte<'ev_payloads'>, Cte<'ev_state'>];
  rows: Cte<'ev_state'>;
}

/** ISO 8601 in UTC with milliseconds, as JavaScript's toISOString writes it. */
const iso = (col: string) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * enqueue (new → scheduled | paused) of event deliveries: each event becomes one job per event
 * endpoint of its workspace that takes its type (accounts with `purpose = 'events'`, the type in
 * `config.events`), in the caller's statement or transaction, so an event is written with the
 * change it reports or not at all (docs/events.md "Written with the change").
 *
 * `source` yields the events, one row each: (workspace_id, id, type, occurred_at, data). A job
 * is two rows as a post's are (job_payloads, job_state; enqueue-jobs.ts says why), with the event
 * as its payload (`payload.event`, sent as it is) and its id as the idempotency key (the
 * `webhook-id` receivers deduplicate on). An endpoint that is not active gets its delivery
 * `paused`, as a post's target would: it goes out when the endpoint is enabled again.
 *
 * ON CONFLICT: UNIQUE (event_id, account_id) makes a second write of the same event (the
 * outcome events' ids are derived from the job) write nothing, so no endpoint gets an event
 * twice from Herald's side. An event nobody subscribes to writes no row at all.
 */
function fanOut(source: SqlPiece): EnqueuedEvents {
  const ev = cte('ev', source);
  const payloads = cte(
    'ev_payloads',
    sql`INSERT INTO job_payloads (id, workspace_id, post_id, event_id, event_type, account_id, provider, idempotency_key, payload, created_at)
         SELECT gen_random_uuid(), e.workspace_id, NULL, e.id, e.type, a.id, 'webhook', e.id::text,
                jsonb_build_object('text', '', 'title', NULL, 'link', NULL, 'media', '[]'::jsonb, 'metadata', NULL,
                                   'scheduledAt', ${raw(iso('e.occurred_at'))},
                                   'event', jsonb_build_object('id', e.id, 'type', e.type, 'timestamp', ${raw(iso('e.occurred_at'))}, 'data', e.data)),
                now()
         FROM ${ev} e JOIN accounts a ON a.workspace_id = e.workspace_id AND a.purpose = 'events' AND a.deleted_at IS NULL
                                     AND a.config->'events' ? e.type
         ON CONFLICT ON CONSTRAINT job_payloads_event_account_key DO NOTHING
         RETURNING id, account_id, workspace_id`,
  );
  // The start state from the endpoint's status (enqueueStatus in job-lifecycle.ts: scheduled when active, else paused).
  const state = cte(
    'ev_state',
    sql`INSERT INTO job_state (job_id, account_id, workspace_id, status, run_at, updated_at)
         SELECT p.id, p.account_id, p.workspace_id, CASE WHEN a.status = 'active' THEN 'scheduled' ELSE 'paused' END, now(), now()
         FROM ${payloads} p JOIN accounts a ON a.id = p.account_id
         RETURNING 1`,
  );
  return { ctes: [ev, payloads, state], rows: state };
}

/** The workspaces that have an event endpoint: a source joins them first, so a workspace without one costs a look at an empty index. */
const SUBSCRIBED = `(SELECT s.workspace_id FROM accounts s WHERE s.purpose = 'events' AND s.deleted_at IS NULL)`;

/** Events built by the caller (post.scheduled, the approvals' events). */
export function valuesSource(events: NewEvent[]): SqlPiece {
  const col = <K extends keyof NewEvent>(k: K) => param(events.map((e) => e[k]));
  return sql`SELECT r.workspace_id, r.id, r.type, r.occurred_at, r.data
        FROM unnest(${col('workspaceId')}::uuid[], ${col('id')}::uuid[], ${col('type')}::text[], ${col('occurredAt')}::timestamptz[],
                    ${param(events.map((e) => JSON.stringify(e.data)))}::jsonb[]) AS r(workspace_id, id, type, occurred_at, data)`;
}

/**
 * post.published / post.failed of posts' jobs that reached `succeeded` / `dead` in the caller's
 * transaction, read from the jobs as that transaction leaves them (so every path that ends a
 * job, a worker's round, the crash recovery or the deadline sweep, reports it the same way).
 *
 * Ids: a job succeeds once, so post.published's id is derived from the job alone; a job may die
 * again after a requeue, so post.failed's from the job and the moment it died. A second write
 * of the same fact (a late success after the success) then finds its id taken and writes nothing.
 */
export function jobOutcomeSource(type: 'post.published' | 'post.failed', jobIds: string[]): SqlPiece {
  const data =
    type === 'post.published'
      ? `jsonb_build_object('postId', j.post_id, 'jobId', j.id, 'accountId', j.account_id, 'provider', j.provider,
                            'url', j.remote_url, 'remoteId', j.remote_id)`
      : `jsonb_build_object('postId', j.post_id, 'jobId', j.id, 'accountId', j.account_id, 'provider', j.provider,
                            'deadReason', j.dead_reason, 'errorClass', j.error_class, 'error', j.last_error,
                            'attempts', j.attempt_count - j.attempt_base)`;
  const id =
    type === 'post.published'
      ? `md5('post.published:' || j.id::text)::uuid`
      : `md5('post.failed:' || j.id::text || ':' || ${iso('j.finished_at')})::uuid`;
  const status = type === 'post.published' ? 'succeeded' : 'dead';
  return sql`SELECT j.workspace_id, ${raw(id)} AS id, ${param(type)}::text AS type, coalesce(j.finished_at, now()) AS occurred_at, ${raw(data)} AS data
        FROM jobs j WHERE j.id = ANY(${param(jobIds)}::uuid[]) AND j.post_id IS NOT NULL AND j.status = '${raw(status)}'
          AND j.workspace_id IN ${raw(SUBSCRIBED)}`;
}

/**
 * account.needs_reauth / account.recovered of accounts that publish (an event endpoint's own
 * state is shown on its page, not sent as an event), read as the caller's transaction leaves them.
 */
export function accountSource(type: 'account.needs_reauth' | 'account.recovered', accountIds: string[]): SqlPiece {
  const status = type === 'account.needs_reauth' ? 'needs_reauth' : 'active';
  return sql`SELECT a.workspace_id, gen_random_uuid() AS id, ${param(type)}::text AS type, now() AS occurred_at,
               jsonb_build_object('accountId', a.id, 'provider', a.provider, 'name', a.name, 'status', a.status,
                                  'reason', a.status_reason) AS data
        FROM accounts a WHERE a.id = ANY(${param(accountIds)}::uuid[]) AND a.purpose = 'publish' AND a.status = '${raw(status)}'
          AND a.workspace_id IN ${raw(SUBSCRIBED)}`;
}

/**
 * Is there any event endpoint at all: the sources are read only when there is. PostgreSQL
 * evaluates this uncorrelated EXISTS once, before the rest (a one-time filter), so a Herald
 * without event endpoints, the common case, reads no job for its events: a round's statement of
 * 100 outcomes ran 0.15 ms without it, 0.03 ms with it.
 */
const ANY_ENDPOINT = `EXISTS (SELECT 1 FROM accounts s WHERE s.purpose = 'events' AND s.deleted_at IS NULL)`;

/** The deliveries of the events of every source, as CTEs for a statement to embed (or for enqueueEvents to run). */
export function eventDeliveries(sources: SqlPiece[]): EnqueuedEvents {
  return fanOut(sql`SELECT * FROM (${join(sources, ' UNION ALL ')}) src WHERE ${raw(ANY_ENDPOINT)}`);
}

/**
 * Runs the deliveries of the events of `sources` as a statement of its own in `q` (the caller's
 * transaction); returns how many were written.
 *
 * A named prepared statement, named after its text (which depends only on which sources, never
 * on their values): a worker's round runs one per round, and planning it each time (its CTEs,
 * the `jobs` view, three INSERTs) cost ~0.5 ms of the server's CPU, more than running it
 * (0.07 ms once prepared; about 5 µs per delivery at 100 outcomes a round).
 */
export async function enqueueEvents(q: Sql, sources: SqlPiece[]): Promise<number> {
  if (sources.length === 0) return 0;
  const events = eventDeliveries(sources);
  const { text, values } = compose(withCtes(events.ctes, sql`SELECT count(*)::int AS n FROM ${events.rows}`));
  const name = `herald_events_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
  const rows = await q.prepared<{ n: number }>(name, text, values);
  return rows[0]?.n ?? 0;
}
