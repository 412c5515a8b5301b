import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Accounts, posts, the publish-job queue and its attempt history, and the idempotency keys
 * of POST /v1/posts. The states and their invariants are CHECK constraints, so a bug cannot
 * write an impossible row.
 */
export class PublishEngine1764470000000 implements MigrationInterface {
  name = 'PublishEngine1764470000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE accounts (
        id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        workspace_id         uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        provider             text NOT NULL CHECK (provider IN ('bluesky', 'linkedin', 'webhook')),
        name                 text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        status               text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'needs_reauth', 'disabled')),
        status_reason        text,
        -- Non-secret settings, returned by the API.
        config               jsonb NOT NULL DEFAULT '{}',
        -- AES-256-GCM sealed JSON (src/common/crypto/secret-box.ts); never returned.
        credentials          text NOT NULL,
        -- Bumped whenever credentials change, so workers can cache decrypted credentials.
        credentials_version  integer NOT NULL DEFAULT 1,
        retry_policy         jsonb,
        max_in_flight        integer NOT NULL DEFAULT 5 CHECK (max_in_flight > 0),
        circuit_state        text NOT NULL DEFAULT 'closed' CHECK (circuit_state IN ('closed', 'open', 'half_open')),
        -- open: the end of the cooldown; half_open: when the probe's lease runs out.
        circuit_open_until   timestamptz,
        consecutive_failures integer NOT NULL DEFAULT 0 CHECK (consecutive_failures >= 0),
        circuit_opened_at    timestamptz,
        last_error           text,
        last_success_at      timestamptz,
        created_at           timestamptz NOT NULL DEFAULT now(),
        updated_at           timestamptz NOT NULL DEFAULT now(),
        -- Deleted accounts are kept so the history of their jobs stays readable.
        deleted_at           timestamptz,
        CHECK (circuit_state = 'closed' OR circuit_open_until IS NOT NULL)
      )`);
    await q.query(`CREATE INDEX accounts_workspace ON accounts (workspace_id, created_at DESC, id DESC) WHERE deleted_at IS NULL`);

    await q.query(`
      CREATE TABLE posts (
        id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        workspace_id  uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        text          text NOT NULL,
        title         text,
        link          text,
        media         jsonb NOT NULL DEFAULT '[]',
        metadata      jsonb,
        scheduled_at  timestamptz NOT NULL,
        publish_by    timestamptz,
        created_at    timestamptz NOT NULL DEFAULT now(),
        updated_at    timestamptz NOT NULL DEFAULT now(),
        CHECK (publish_by IS NULL OR publish_by > scheduled_at)
      )`);
    await q.query(`CREATE INDEX posts_workspace ON posts (workspace_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX posts_workspace_scheduled ON posts (workspace_id, scheduled_at)`);

    await q.query(`
      CREATE TABLE jobs (
        id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        workspace_id      uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        post_id           uuid NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
        account_id        uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        provider          text NOT NULL,
        status            text NOT NULL CHECK (status IN ('scheduled', 'in_progress', 'succeeded', 'paused', 'dead', 'cancelled', 'discarded')),
        run_at            timestamptz NOT NULL,
        publish_by        timestamptz,
        -- Attempts in the job's whole history; attempt_base is where the current budget
        -- started (a requeue from the dead-letter queue gives a fresh budget, history kept).
        attempt_count     integer NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
        attempt_base      integer NOT NULL DEFAULT 0 CHECK (attempt_base >= 0 AND attempt_base <= attempt_count),
        idempotency_key   text NOT NULL,
        -- The target's own text override, so a post edit keeps it.
        text_override     text,
        payload           jsonb NOT NULL,
        payload_edited_at timestamptz,
        error_class       text CHECK (error_class IN ('success', 'transient', 'auth', 'permanent', 'poison')),
        last_error        text,
        -- The last attempt's answer: LinkedIn reads a 422 DUPLICATE_POST differently after a
        -- failure that left no answer (the first request may have gone through).
        last_http_status  integer,
        last_network_error text,
        dead_reason       text CHECK (dead_reason IN ('max_attempts', 'permanent', 'poison', 'expired')),
        remote_id         text,
        remote_url        text,
        lease_owner       text,
        lease_expires_at  timestamptz,
        created_at        timestamptz NOT NULL DEFAULT now(),
        updated_at        timestamptz NOT NULL DEFAULT now(),
        finished_at       timestamptz,
        UNIQUE (post_id, account_id),
        CHECK ((status = 'in_progress') = (lease_owner IS NOT NULL AND lease_expires_at IS NOT NULL)),
        CHECK ((status = 'dead') = (dead_reason IS NOT NULL))
      )`);
    // The claim walks each account's due jobs in run_at order (LATERAL, LIMIT = the account's
    // free slots), so it locks only rows it can take. Partial: finished, dead and cancelled
    // jobs are not in it, so the claim stays as fast with millions of old jobs as with none.
    await q.query(`CREATE INDEX jobs_ready_account ON jobs (account_id, run_at) WHERE status = 'scheduled'`);
    // The next due job (an idle worker sleeps until then).
    await q.query(`CREATE INDEX jobs_ready ON jobs (run_at) WHERE status = 'scheduled'`);
    // Leases to reclaim after a worker died, and the in-flight count per account.
    await q.query(`CREATE INDEX jobs_in_progress ON jobs (account_id, lease_expires_at) WHERE status = 'in_progress'`);
    // Paused jobs of one account, resumed when it is fixed.
    await q.query(`CREATE INDEX jobs_paused_account ON jobs (account_id) WHERE status = 'paused'`);
    await q.query(`CREATE INDEX jobs_publish_by ON jobs (publish_by) WHERE status IN ('scheduled', 'paused') AND publish_by IS NOT NULL`);
    // (post_id, account_id) is UNIQUE above: its index also serves lookups by post_id.
    await q.query(`CREATE INDEX jobs_dead ON jobs (workspace_id, updated_at DESC, id DESC) WHERE status = 'dead'`);

    await q.query(`
      CREATE TABLE attempts (
        id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        job_id            uuid NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
        number            integer NOT NULL CHECK (number > 0),
        started_at        timestamptz NOT NULL,
        finished_at       timestamptz NOT NULL,
        http_status       integer,
        network_error     text,
        error_class       text NOT NULL CHECK (error_class IN ('success', 'transient', 'auth', 'permanent', 'poison')),
        decision          text NOT NULL CHECK (decision IN ('succeed', 'retry', 'dead', 'pause')),
        retry_at          timestamptz,
        latency_ms        integer NOT NULL,
        response_excerpt  text,
        message           text,
        -- Things a person should know about an attempt that did not fail it (one per line),
        -- e.g. a Bluesky link card left out because the page could not be fetched.
        warnings          text,
        idempotency_key   text NOT NULL,
        worker            text NOT NULL,
        UNIQUE (job_id, number)
      )`);
    // Attempts are history: once written, never changed.
    await q.query(`
      CREATE FUNCTION attempts_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'attempt rows are immutable';
      END $$`);
    await q.query(`CREATE TRIGGER attempts_no_update BEFORE UPDATE ON attempts FOR EACH ROW EXECUTE FUNCTION attempts_immutable()`);

    await q.query(`
      CREATE TABLE idempotency_keys (
        workspace_id    uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        key             text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
        request_hash    bytea NOT NULL,
        state           text NOT NULL CHECK (state IN ('in_flight', 'completed')),
        response_status integer,
        response_body   jsonb,
        created_at      timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, key)
      )`);
    await q.query(`CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE idempotency_keys`);
    await q.query(`DROP TABLE attempts`);
    await q.query(`DROP FUNCTION attempts_immutable`);
    await q.query(`DROP TABLE jobs`);
    await q.query(`DROP TABLE posts`);
    await q.query(`DROP TABLE accounts`);
  }
}
