import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The job split in two (issue 21, docs/benchmarks.md "Writes per delivery"): what a job sends,
 * written once, and where it stands, written at every step.
 *
 * - `job_payloads` (the old `jobs` table, renamed, so its foreign keys from posts, accounts,
 *   workspaces and its unique (post_id, account_id) stay as they were): the payload, the
 *   idempotency key, the target's text override. Written at intake; after that only by a
 *   reschedule of a post not started yet and by a dead-letter edit or revival (all rare).
 * - `job_state`: status, run time, deadline, lease, attempt counts, the last outcome, the
 *   remote ids. A claim and a record update this narrow row (~150 B instead of ~265 B), and every
 *   partial index of the queue lives here. A status change cannot be a HOT update (status is in
 *   the partial indexes' predicates), so each one writes a new row version and index entries:
 *   the smaller the row it rewrites, the less WAL. Measured before building it with
 *   bench/narrow-state.sql: 1,929 → 1,259 B of WAL per delivery (−35 %).
 * - `jobs`: a view joining the two, one row per job with the columns the table had, in its
 *   order. The modules that read jobs (posts, jobs, dead-letter views, digest, reports) read
 *   it; only the queue (src/queue/sql) writes, and it writes the two tables.
 *
 * The attempts' foreign key points at `job_state`: each attempt insert takes a FOR KEY SHARE
 * lock on its parent row, and on the narrow row that lock lands on a page the record's update
 * writes anyway. Pointed at the wide row, the lock was the only write to that page and cost
 * ~300 B of full-page images per delivery (measured with pg_waldump).
 *
 * account_id and workspace_id are copied into job_state (the claim's, in-flight and dead-letter
 * indexes are per account or per workspace); a composite foreign key to job_payloads holds the
 * copies equal to the originals. Both rows are written by one statement (enqueue-jobs.ts).
 */
export class NarrowJobState1765600000000 implements MigrationInterface {
  name = 'NarrowJobState1765600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs RENAME TO job_payloads`);
    await q.query(`ALTER TABLE job_payloads RENAME CONSTRAINT jobs_pkey TO job_payloads_pkey`);
    // The target of job_state's composite foreign key (the copies of account and workspace).
    await q.query(`ALTER TABLE job_payloads ADD CONSTRAINT job_payloads_id_account_workspace_key UNIQUE (id, account_id, workspace_id)`);

    await q.query(`
      CREATE TABLE job_state (
        job_id            uuid PRIMARY KEY,
        account_id        uuid NOT NULL,
        workspace_id      uuid NOT NULL,
        status            text NOT NULL CHECK (status IN ('scheduled', 'in_progress', 'succeeded', 'paused', 'dead', 'cancelled', 'discarded')),
        run_at            timestamptz NOT NULL,
        publish_by        timestamptz,
        -- Attempts in the job's whole history; attempt_base is where the current budget
        -- started (a requeue from the dead-letter queue gives a fresh budget, history kept).
        attempt_count     integer NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
        attempt_base      integer NOT NULL DEFAULT 0 CHECK (attempt_base >= 0 AND attempt_base <= attempt_count),
        lease_owner       text,
        lease_expires_at  timestamptz,
        updated_at        timestamptz NOT NULL DEFAULT now(),
        finished_at       timestamptz,
        error_class       text CHECK (error_class IN ('success', 'transient', 'auth', 'permanent', 'poison')),
        last_error        text,
        -- The last attempt's answer: LinkedIn reads a 422 DUPLICATE_POST differently after a
        -- failure that left no answer (the first request may have gone through).
        last_http_status  integer,
        last_network_error text,
        dead_reason       text CHECK (dead_reason IN ('max_attempts', 'permanent', 'poison', 'expired')),
        remote_id         text,
        remote_url        text,
        -- The parts of this job the platform has published so far, in order: [{ index, uri, cid, url }]
        -- (index 0 is the first part), kept across retries and requeues. At most 26 entries
        -- (the first part and 25 further ones).
        parts             jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(parts) = 'array' AND jsonb_array_length(parts) <= 26),
        -- The copies of the job's account and workspace are the job's own (never changed).
        -- CASCADE: a job's state goes with its payload row (which nothing deletes: the
        -- payload's own keys to posts and accounts RESTRICT).
        CONSTRAINT job_state_job_fkey FOREIGN KEY (job_id, account_id, workspace_id)
          REFERENCES job_payloads (id, account_id, workspace_id) ON DELETE CASCADE,
        -- A job in flight, and only one, holds a lease (owner and expiry).
        CONSTRAINT job_state_lease CHECK ((status = 'in_progress') = (lease_owner IS NOT NULL AND lease_expires_at IS NOT NULL)),
        -- A dead job says why; a discarded one keeps why it died (the audit trail shows it).
        CONSTRAINT job_state_dead_reason CHECK (
          (status <> 'dead' OR dead_reason IS NOT NULL) AND (status IN ('dead', 'discarded') OR dead_reason IS NULL))
      )`);
    await q.query(`
      INSERT INTO job_state (job_id, account_id, workspace_id, status, run_at, publish_by, attempt_count, attempt_base,
                             lease_owner, lease_expires_at, updated_at, finished_at, error_class, last_error, last_http_status,
                             last_network_error, dead_reason, remote_id, remote_url, parts)
      SELECT id, account_id, workspace_id, status, run_at, publish_by, attempt_count, attempt_base,
             lease_owner, lease_expires_at, updated_at, finished_at, error_class, last_error, last_http_status,
             last_network_error, dead_reason, remote_id, remote_url, parts
      FROM job_payloads`);

    await q.query(`ALTER TABLE attempts DROP CONSTRAINT attempts_job_id_fkey`);
    await q.query(
      `ALTER TABLE attempts ADD CONSTRAINT attempts_job_id_fkey FOREIGN KEY (job_id) REFERENCES job_state(job_id) ON DELETE CASCADE`,
    );

    // Dropping the state columns drops the old partial indexes and the checks on them.
    await q.query(`
      ALTER TABLE job_payloads
        DROP COLUMN status, DROP COLUMN run_at, DROP COLUMN publish_by, DROP COLUMN attempt_count, DROP COLUMN attempt_base,
        DROP COLUMN lease_owner, DROP COLUMN lease_expires_at, DROP COLUMN updated_at, DROP COLUMN finished_at,
        DROP COLUMN error_class, DROP COLUMN last_error, DROP COLUMN last_http_status, DROP COLUMN last_network_error,
        DROP COLUMN dead_reason, DROP COLUMN remote_id, DROP COLUMN remote_url, DROP COLUMN parts`);
    await this.stateIndexes(q);
    await this.view(q);
  }

  /** The queue's partial indexes, under their old names (src/queue/job-columns.ts says what each serves). */
  private async stateIndexes(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX jobs_ready_account ON job_state (account_id, run_at) WHERE status = 'scheduled'`);
    await q.query(`CREATE INDEX jobs_ready ON job_state (run_at) WHERE status = 'scheduled'`);
    await q.query(`CREATE INDEX jobs_in_progress ON job_state (account_id, lease_expires_at) WHERE status = 'in_progress'`);
    await q.query(`CREATE INDEX jobs_paused_account ON job_state (account_id) WHERE status = 'paused'`);
    await q.query(
      `CREATE INDEX jobs_publish_by ON job_state (publish_by) WHERE status IN ('scheduled', 'paused') AND publish_by IS NOT NULL`,
    );
    await q.query(`CREATE INDEX jobs_dlq ON job_state (workspace_id, finished_at DESC, job_id DESC) WHERE status IN ('dead', 'discarded')`);
  }

  /**
   * One row per job, the table's old columns in their old order. id, account_id and workspace_id
   * come from job_state, so a reader's filter on them reaches the state's indexes (the
   * dead-letter list's per workspace, the in-flight count's per account).
   */
  private async view(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE VIEW jobs AS
      SELECT s.job_id AS id, s.workspace_id, p.post_id, s.account_id, p.provider, s.status, s.run_at, s.publish_by,
             s.attempt_count, s.attempt_base, p.idempotency_key, p.text_override, p.payload, p.payload_edited_at,
             s.error_class, s.last_error, s.last_http_status, s.last_network_error, s.dead_reason, s.remote_id, s.remote_url,
             s.lease_owner, s.lease_expires_at, p.created_at, s.updated_at, s.finished_at, p.payload_changed_since_key, s.parts
      FROM job_state s JOIN job_payloads p ON p.id = s.job_id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP VIEW jobs`);
    await q.query(`
      ALTER TABLE job_payloads
        ADD COLUMN status text, ADD COLUMN run_at timestamptz, ADD COLUMN publish_by timestamptz,
        ADD COLUMN attempt_count integer NOT NULL DEFAULT 0, ADD COLUMN attempt_base integer NOT NULL DEFAULT 0,
        ADD COLUMN error_class text, ADD COLUMN last_error text, ADD COLUMN last_http_status integer,
        ADD COLUMN last_network_error text, ADD COLUMN dead_reason text, ADD COLUMN remote_id text, ADD COLUMN remote_url text,
        ADD COLUMN lease_owner text, ADD COLUMN lease_expires_at timestamptz, ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now(),
        ADD COLUMN finished_at timestamptz, ADD COLUMN parts jsonb NOT NULL DEFAULT '[]'`);
    await q.query(`
      UPDATE job_payloads p SET status = s.status, run_at = s.run_at, publish_by = s.publish_by, attempt_count = s.attempt_count,
             attempt_base = s.attempt_base, error_class = s.error_class, last_error = s.last_error,
             last_http_status = s.last_http_status, last_network_error = s.last_network_error, dead_reason = s.dead_reason,
             remote_id = s.remote_id, remote_url = s.remote_url, lease_owner = s.lease_owner,
             lease_expires_at = s.lease_expires_at, updated_at = s.updated_at, finished_at = s.finished_at, parts = s.parts
      FROM job_state s WHERE s.job_id = p.id`);
    await q.query(`ALTER TABLE attempts DROP CONSTRAINT attempts_job_id_fkey`);
    await q.query(`DROP TABLE job_state`);
    await q.query(`ALTER TABLE job_payloads DROP CONSTRAINT job_payloads_id_account_workspace_key`);
    await q.query(`ALTER TABLE job_payloads RENAME CONSTRAINT job_payloads_pkey TO jobs_pkey`);
    await q.query(`ALTER TABLE job_payloads RENAME TO jobs`);
    await q.query(`
      ALTER TABLE jobs
        ALTER COLUMN status SET NOT NULL, ALTER COLUMN run_at SET NOT NULL,
        ADD CONSTRAINT jobs_status_check CHECK (status IN ('scheduled', 'in_progress', 'succeeded', 'paused', 'dead', 'cancelled', 'discarded')),
        ADD CONSTRAINT jobs_attempt_count_check CHECK (attempt_count >= 0),
        ADD CONSTRAINT jobs_check CHECK (attempt_base >= 0 AND attempt_base <= attempt_count),
        ADD CONSTRAINT jobs_error_class_check CHECK (error_class IN ('success', 'transient', 'auth', 'permanent', 'poison')),
        ADD CONSTRAINT jobs_dead_reason_check CHECK (dead_reason IN ('max_attempts', 'permanent', 'poison', 'expired')),
        ADD CONSTRAINT jobs_parts_check CHECK (jsonb_typeof(parts) = 'array' AND jsonb_array_length(parts) <= 26),
        ADD CONSTRAINT jobs_check1 CHECK ((status = 'in_progress') = (lease_owner IS NOT NULL AND lease_expires_at IS NOT NULL)),
        ADD CONSTRAINT jobs_dead_reason_state CHECK (
          (status <> 'dead' OR dead_reason IS NOT NULL) AND (status IN ('dead', 'discarded') OR dead_reason IS NULL))`);
    await q.query(`ALTER TABLE attempts ADD CONSTRAINT attempts_job_id_fkey FOREIGN KEY (job_id) REFERENCES jobs(id) ON DELETE CASCADE`);
    await q.query(`CREATE INDEX jobs_ready_account ON jobs (account_id, run_at) WHERE status = 'scheduled'`);
    await q.query(`CREATE INDEX jobs_ready ON jobs (run_at) WHERE status = 'scheduled'`);
    await q.query(`CREATE INDEX jobs_in_progress ON jobs (account_id, lease_expires_at) WHERE status = 'in_progress'`);
    await q.query(`CREATE INDEX jobs_paused_account ON jobs (account_id) WHERE status = 'paused'`);
    await q.query(`CREATE INDEX jobs_publish_by ON jobs (publish_by) WHERE status IN ('scheduled', 'paused') AND publish_by IS NOT NULL`);
    await q.query(`CREATE INDEX jobs_dlq ON jobs (workspace_id, finished_at DESC, id DESC) WHERE status IN ('dead', 'discarded')`);
  }
}
