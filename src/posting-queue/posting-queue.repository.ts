import { Injectable } from '@nestjs/common';
import { Db, Sql } from '../database/db';
import { compose, cte, Cte, param, sql } from '../database/statement';
import type { QueueSchedule, QueueSlot, Weekday } from './queue-slots';

/** A schedule as stored: the workspace's (accountId null) or an account's own. */
export interface ScheduleRow extends QueueSchedule {
  accountId: string | null;
}

/** A slot taken by a post on one account. */
export interface TakenSlot {
  postId: string;
  accountId: string;
  at: Date;
  timezone: string;
  day: Weekday;
  time: string;
  localTime: string;
}

/** The name of the constraint a second taker of one slot runs into (migrations/1765980000000-posting-queue.ts). */
export const SLOT_TAKEN_CONSTRAINT = 'posting_queue_slots_account_slot';

const TAKEN_COLUMNS = `post_id AS "postId", account_id AS "accountId", slot_at AS "at", timezone, day, time, local_time AS "localTime"`;

/** SQL of posting_queue_schedules and posting_queue_slots. Every method is scoped by workspace. */
@Injectable()
export class PostingQueueRepository {
  constructor(private readonly db: Db) {}

  /** The workspace's schedule (accountId null) and the given accounts' own, where saved. */
  async schedules(workspaceId: string, accountIds: readonly string[], runner: Sql = this.db): Promise<ScheduleRow[]> {
    return runner.query<ScheduleRow>(
      `SELECT account_id AS "accountId", timezone, slots FROM posting_queue_schedules
       WHERE workspace_id = $1 AND (account_id IS NULL OR account_id = ANY($2::uuid[]))`,
      [workspaceId, accountIds],
    );
  }

  /** Saves the workspace's schedule (accountId null) or an account's own, replacing the one before. */
  async save(workspaceId: string, accountId: string | null, schedule: { timezone: string; slots: QueueSlot[] }): Promise<void> {
    const values = [workspaceId, accountId, schedule.timezone, JSON.stringify(schedule.slots)];
    // Two partial unique indexes (one workspace row, one row per account): each upsert names its own.
    if (accountId === null) {
      await this.db.query(
        `INSERT INTO posting_queue_schedules (workspace_id, account_id, timezone, slots) VALUES ($1, $2, $3, $4)
         ON CONFLICT (workspace_id) WHERE account_id IS NULL DO UPDATE SET timezone = EXCLUDED.timezone, slots = EXCLUDED.slots, updated_at = now()`,
        values,
      );
    } else {
      await this.db.query(
        `INSERT INTO posting_queue_schedules (workspace_id, account_id, timezone, slots) VALUES ($1, $2, $3, $4)
         ON CONFLICT (account_id) WHERE account_id IS NOT NULL DO UPDATE SET timezone = EXCLUDED.timezone, slots = EXCLUDED.slots, updated_at = now()`,
        values,
      );
    }
  }

  /** An account's own schedule removed: it follows the workspace's again. True when it had one. */
  async removeAccountSchedule(workspaceId: string, accountId: string): Promise<boolean> {
    const rows = await this.db.query(`DELETE FROM posting_queue_schedules WHERE workspace_id = $1 AND account_id = $2 RETURNING 1`, [
      workspaceId,
      accountId,
    ]);
    return rows.length > 0;
  }

  /** Instants taken on these accounts in (from, to], by any post. */
  async takenBetween(
    workspaceId: string,
    accountIds: readonly string[],
    from: Date,
    to: Date,
    runner: Sql = this.db,
  ): Promise<{ accountId: string; at: Date }[]> {
    return runner.query(
      `SELECT account_id AS "accountId", slot_at AS "at" FROM posting_queue_slots
       WHERE workspace_id = $1 AND account_id = ANY($2::uuid[]) AND slot_at > $3 AND slot_at <= $4`,
      [workspaceId, accountIds, from, to],
    );
  }

  /** Slots taken by these posts. */
  async ofPosts(workspaceId: string, postIds: readonly string[], runner: Sql = this.db): Promise<TakenSlot[]> {
    if (postIds.length === 0) return [];
    return runner.query<TakenSlot>(
      `SELECT ${TAKEN_COLUMNS} FROM posting_queue_slots WHERE workspace_id = $1 AND post_id = ANY($2::uuid[]) ORDER BY post_id, account_id`,
      [workspaceId, postIds],
    );
  }

  /** Taken slots of the workspace in (from, to]: the calendar's. */
  async takenInRange(workspaceId: string, from: Date, to: Date): Promise<TakenSlot[]> {
    return this.db.query<TakenSlot>(
      `SELECT ${TAKEN_COLUMNS} FROM posting_queue_slots WHERE workspace_id = $1 AND slot_at > $2 AND slot_at <= $3 ORDER BY slot_at, account_id`,
      [workspaceId, from, to],
    );
  }

  /**
   * The slots of a post as a CTE of the post's own INSERT statement (posts.repository create),
   * so they commit with the post or not at all. A slot another post took meanwhile fails the
   * whole statement with a unique violation on SLOT_TAKEN_CONSTRAINT: nothing is written, and
   * the caller takes the next slot.
   */
  takeCte(workspaceId: string, slots: readonly TakenSlot[]): Cte<'queue_slots'> {
    return cte('queue_slots', this.insertPiece(workspaceId, slots));
  }

  /** The same INSERT inside a transaction (a draft queued by PATCH). */
  async take(m: Sql, workspaceId: string, slots: readonly TakenSlot[]): Promise<void> {
    const { text, values } = compose(this.insertPiece(workspaceId, slots));
    await m.query(text, values);
  }

  private insertPiece(workspaceId: string, slots: readonly TakenSlot[]) {
    // One row per target, unnested from arrays: the statement's text is the same for 1 or 20 targets.
    return sql`INSERT INTO posting_queue_slots (workspace_id, account_id, slot_at, post_id, timezone, day, time, local_time)
      SELECT ${param(workspaceId)}, s.account_id, s.slot_at, s.post_id, s.timezone, s.day, s.time, s.local_time
      FROM unnest(${param(slots.map((s) => s.accountId))}::uuid[], ${param(slots.map((s) => s.at))}::timestamptz[],
                  ${param(slots.map((s) => s.postId))}::uuid[], ${param(slots.map((s) => s.timezone))}::text[],
                  ${param(slots.map((s) => s.day))}::text[], ${param(slots.map((s) => s.time))}::text[],
                  ${param(slots.map((s) => s.localTime))}::text[])
           AS s(account_id, slot_at, post_id, timezone, day, time, local_time)`;
  }

  /** A post's slots given back (cancelled, or given another time). */
  async release(m: Sql, workspaceId: string, postId: string): Promise<void> {
    await m.query(`DELETE FROM posting_queue_slots WHERE workspace_id = $1 AND post_id = $2`, [workspaceId, postId]);
  }
}
