import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The posting queue (issue 29): weekly time slots a post sent with `"queue": true` takes
 * (docs/api.md "The posting queue").
 *
 * - posting_queue_schedules: a workspace's schedule (account_id NULL) and the accounts that have
 *   their own, which replaces the workspace's for that account. One of each at most (partial
 *   unique indexes). The slots are a JSON list of { day, time }, checked by the service
 *   (src/posting-queue/queue-slots.ts); the CHECK keeps the list's type and size, so no bug can
 *   store what the search would walk for ever.
 * - posting_queue_slots: a slot taken, per account. UNIQUE (account_id, slot_at) is what makes
 *   "two posts queued at once never take one slot" true across processes: the row is written in
 *   the statement (or transaction) that writes the post, and the second writer of a slot gets a
 *   unique violation and takes the next one. A post's rows go with it (a deleted draft); a
 *   cancelled or rescheduled post's are deleted by the service.
 */
export class PostingQueue1765980000000 implements MigrationInterface {
  name = 'PostingQueue1765980000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE posting_queue_schedules (
        id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        -- NULL: the workspace's schedule; else this account's own.
        account_id   uuid REFERENCES accounts(id) ON DELETE CASCADE,
        timezone     text NOT NULL CHECK (length(timezone) BETWEEN 1 AND 64),
        -- At most 100 slots a week (MAX_SLOTS in src/posting-queue/queue-slots.ts).
        slots        jsonb NOT NULL CHECK (jsonb_typeof(slots) = 'array' AND jsonb_array_length(slots) <= 100),
        updated_at   timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE UNIQUE INDEX posting_queue_schedules_workspace ON posting_queue_schedules (workspace_id) WHERE account_id IS NULL`,
    );
    await q.query(
      `CREATE UNIQUE INDEX posting_queue_schedules_account ON posting_queue_schedules (account_id) WHERE account_id IS NOT NULL`,
    );
    await q.query(`
      CREATE TABLE posting_queue_slots (
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        account_id   uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        slot_at      timestamptz NOT NULL,
        post_id      uuid NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
        -- The slot as its schedule says it (for the answer): zone, weekday, time as scheduled.
        timezone     text NOT NULL,
        day          text NOT NULL CHECK (day IN ('mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun')),
        time         text NOT NULL CHECK (time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
        -- The wall-clock time it happens at: time, or the first that exists after it on a day the clocks skip it.
        local_time   text NOT NULL CHECK (local_time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
        created_at   timestamptz NOT NULL DEFAULT now(),
        -- One post per slot per account, whatever the number of processes queueing.
        CONSTRAINT posting_queue_slots_account_slot UNIQUE (account_id, slot_at),
        -- A post takes one slot per target.
        CONSTRAINT posting_queue_slots_post_account UNIQUE (post_id, account_id)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE posting_queue_slots`);
    await q.query(`DROP TABLE posting_queue_schedules`);
  }
}
