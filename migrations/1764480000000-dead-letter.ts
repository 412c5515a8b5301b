import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The dead-letter queue: who changed what on a failed job (edit, requeue, discard), whether a
 * dead job's payload changed since its idempotency key was issued, and the index the DLQ list
 * walks (newest dead first, per workspace).
 */
export class DeadLetter1764480000000 implements MigrationInterface {
  name = 'DeadLetter1764480000000';

  async up(q: QueryRunner): Promise<void> {
    // Set by a DLQ edit, cleared by the requeue that issues the new key. A flag rather than a
    // comparison of payload_edited_at with the last attempt's start: attempt times come from
    // the worker host's clock, edits from the database's, and hosts' clocks may disagree.
    await q.query(`ALTER TABLE jobs ADD COLUMN payload_changed_since_key boolean NOT NULL DEFAULT false`);

    // A discarded job keeps why it died (the audit trail shows it), so dead_reason is required
    // for 'dead' and allowed for 'discarded' only. The old constraint was unnamed: find it.
    await this.dropDeadReasonCheck(q);
    await q.query(`
      ALTER TABLE jobs ADD CONSTRAINT jobs_dead_reason_state CHECK (
        (status <> 'dead' OR dead_reason IS NOT NULL) AND (status IN ('dead', 'discarded') OR dead_reason IS NULL))`);

    // The DLQ list: a workspace's dead (or discarded) jobs, newest death first. finished_at is
    // set whenever a job becomes dead (completion, lease reclaim, deadline) and is not touched
    // by an edit, so a page cursor stays stable while people edit. Replaces jobs_dead (on
    // updated_at, which an edit would move, and used by nothing).
    await q.query(`DROP INDEX IF EXISTS jobs_dead`);
    await q.query(`CREATE INDEX jobs_dlq ON jobs (workspace_id, finished_at DESC, id DESC) WHERE status IN ('dead', 'discarded')`);

    await q.query(`
      CREATE TABLE job_audit (
        id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        job_id        uuid NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
        workspace_id  uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        -- Which API key did it (keys are revoked, never deleted; SET NULL only if one ever is).
        api_key_id    uuid REFERENCES api_keys(id) ON DELETE SET NULL,
        action        text NOT NULL CHECK (action IN ('edit', 'requeue', 'discard')),
        -- edit: the payload fields that changed, before and after.
        -- requeue: status, idempotency key, run_at, publish_by before and after (and force).
        -- discard: status before and after.
        before        jsonb NOT NULL,
        after         jsonb NOT NULL,
        created_at    timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX job_audit_job ON job_audit (job_id, id)`);
    // The trail is evidence: once written, never changed.
    await q.query(`CREATE TRIGGER job_audit_no_update BEFORE UPDATE ON job_audit FOR EACH ROW EXECUTE FUNCTION attempts_immutable()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE job_audit`);
    await q.query(`DROP INDEX jobs_dlq`);
    await q.query(`CREATE INDEX jobs_dead ON jobs (workspace_id, updated_at DESC, id DESC) WHERE status = 'dead'`);
    await q.query(`UPDATE jobs SET dead_reason = NULL WHERE status = 'discarded'`);
    await q.query(`ALTER TABLE jobs DROP CONSTRAINT jobs_dead_reason_state`);
    await q.query(`ALTER TABLE jobs ADD CHECK ((status = 'dead') = (dead_reason IS NOT NULL))`);
    await q.query(`ALTER TABLE jobs DROP COLUMN payload_changed_since_key`);
  }

  private async dropDeadReasonCheck(q: QueryRunner): Promise<void> {
    const rows = (await q.query(
      `SELECT conname FROM pg_constraint
       WHERE conrelid = 'jobs'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%''dead''::text) = (dead_reason IS NOT NULL)%'`,
    )) as { conname: string }[];
    if (rows.length !== 1) throw new Error(`expected one jobs check on dead_reason, found ${rows.length}`);
    await q.query(`ALTER TABLE jobs DROP CONSTRAINT "${rows[0].conname}"`);
  }
}
