import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Event webhooks (issue 30, docs/events.md): a workspace subscribes endpoints to Herald's own
 * events, and Herald's own engine delivers them.
 *
 * - An event subscription is an account of its own (`accounts.purpose = 'events'`, provider
 *   `webhook`): the per-account circuit breaker, in-flight cap, retry policy, Retry-After,
 *   Standard Webhooks signature and dead-letter queue apply to its deliveries unchanged, and a
 *   dead endpoint never shares a circuit or an in-flight budget with an account that publishes
 *   posts (not even one pointing at the same host). Its config holds the URL (as a webhook
 *   account's), the event types it takes (`events`) and a `description`. The accounts list, a
 *   post's targets and the digest's accounts read `purpose = 'publish'` only.
 * - A delivery is a job whose payload is the event (`job_payloads.event_id`, `event_type`)
 *   instead of a post (`post_id`): exactly one of the two is set, so every job is either a
 *   post's or an event's. The idempotency key (the `webhook-id` header) is the event id.
 * - One event reaches each endpoint at most once: UNIQUE (event_id, account_id). The ids of
 *   events about a job's outcome are derived from the job (and its attempt number), so a write
 *   of the same fact twice (a late success recorded after the success) finds the first and
 *   writes nothing.
 *
 * Events are rows of the jobs they are delivered by, written in the transaction of the change
 * they report: there is no table of events apart from them, and an event nobody subscribes to
 * is not stored.
 */
export class EventWebhooks1765990000000 implements MigrationInterface {
  name = 'EventWebhooks1765990000000';

  async up(q: QueryRunner): Promise<void> {
    // What an account is for: publishing posts (every account so far) or receiving Herald's events.
    await q.query(`ALTER TABLE accounts ADD COLUMN purpose text NOT NULL DEFAULT 'publish'`);
    await q.query(`ALTER TABLE accounts ADD CONSTRAINT accounts_purpose_check CHECK (purpose IN ('publish', 'events'))`);
    // An event endpoint is a signed webhook and says which events it takes (a non-empty array of names).
    await q.query(`
      ALTER TABLE accounts ADD CONSTRAINT accounts_events_endpoint CHECK (
        purpose <> 'events' OR (provider = 'webhook' AND jsonb_typeof(config->'events') = 'array' AND jsonb_array_length(config->'events') > 0))`);
    // The fan-out of an event finds the workspace's endpoints here (few rows: a partial index).
    await q.query(`CREATE INDEX accounts_event_endpoints ON accounts (workspace_id) WHERE purpose = 'events' AND deleted_at IS NULL`);

    await q.query(`ALTER TABLE job_payloads ALTER COLUMN post_id DROP NOT NULL`);
    await q.query(`ALTER TABLE job_payloads ADD COLUMN event_id uuid, ADD COLUMN event_type text`);
    // Every job delivers either a post or an event, never both, never neither.
    await q.query(`ALTER TABLE job_payloads ADD CONSTRAINT job_payloads_post_or_event CHECK ((post_id IS NULL) <> (event_id IS NULL))`);
    // An event's job names its type (the names of docs/events.md; src/events/event-types.ts lists the same).
    await q.query(`
      ALTER TABLE job_payloads ADD CONSTRAINT job_payloads_event_type CHECK (
        (event_id IS NULL AND event_type IS NULL) OR event_type IN (
          'post.scheduled', 'post.published', 'post.failed', 'post.approval_requested', 'post.approved', 'post.rejected',
          'account.needs_reauth', 'account.recovered'))`);
    // One delivery of an event per endpoint (NULLs are distinct: posts' jobs are not concerned).
    await q.query(`ALTER TABLE job_payloads ADD CONSTRAINT job_payloads_event_account_key UNIQUE (event_id, account_id)`);

    // The view gains the two columns at its end: a replaced view keeps its columns and may only add some after them.
    await q.query(`
      CREATE OR REPLACE VIEW jobs AS
      SELECT s.job_id AS id, s.workspace_id, p.post_id, s.account_id, p.provider, s.status, s.run_at, s.publish_by,
             s.attempt_count, s.attempt_base, p.idempotency_key, p.text_override, p.payload, p.payload_edited_at,
             s.error_class, s.last_error, s.last_http_status, s.last_network_error, s.dead_reason, s.remote_id, s.remote_url,
             s.lease_owner, s.lease_expires_at, p.created_at, s.updated_at, s.finished_at, p.payload_changed_since_key, s.parts,
             p.event_id, p.event_type
      FROM job_state s JOIN job_payloads p ON p.id = s.job_id`);
    // An endpoint's recent deliveries, newest first (the page and GET …/deliveries).
    await q.query(`CREATE INDEX job_payloads_event_deliveries ON job_payloads (account_id, created_at DESC) WHERE event_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    const rows = (await q.query(`SELECT count(*)::int AS n FROM job_payloads WHERE event_id IS NOT NULL`)) as { n: number }[];
    if ((rows[0]?.n ?? 0) > 0) {
      throw new Error(`${rows[0].n} event deliveries exist: their jobs have no post, which the older schema cannot hold`);
    }
    await q.query(`DROP INDEX job_payloads_event_deliveries`);
    await q.query(`DROP VIEW jobs`);
    await q.query(`
      CREATE VIEW jobs AS
      SELECT s.job_id AS id, s.workspace_id, p.post_id, s.account_id, p.provider, s.status, s.run_at, s.publish_by,
             s.attempt_count, s.attempt_base, p.idempotency_key, p.text_override, p.payload, p.payload_edited_at,
             s.error_class, s.last_error, s.last_http_status, s.last_network_error, s.dead_reason, s.remote_id, s.remote_url,
             s.lease_owner, s.lease_expires_at, p.created_at, s.updated_at, s.finished_at, p.payload_changed_since_key, s.parts
      FROM job_state s JOIN job_payloads p ON p.id = s.job_id`);
    await q.query(`ALTER TABLE job_payloads DROP CONSTRAINT job_payloads_event_account_key`);
    await q.query(`ALTER TABLE job_payloads DROP CONSTRAINT job_payloads_event_type`);
    await q.query(`ALTER TABLE job_payloads DROP CONSTRAINT job_payloads_post_or_event`);
    await q.query(`ALTER TABLE job_payloads DROP COLUMN event_id, DROP COLUMN event_type`);
    await q.query(`ALTER TABLE job_payloads ALTER COLUMN post_id SET NOT NULL`);
    await q.query(`DROP INDEX accounts_event_endpoints`);
    // Event endpoints cannot stay accounts of the older schema: removed (their jobs went above).
    await q.query(`DELETE FROM accounts WHERE purpose = 'events'`);
    await q.query(`ALTER TABLE accounts DROP CONSTRAINT accounts_events_endpoint`);
    await q.query(`ALTER TABLE accounts DROP CONSTRAINT accounts_purpose_check`);
    await q.query(`ALTER TABLE accounts DROP COLUMN purpose`);
  }
}
