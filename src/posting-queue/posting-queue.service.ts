import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../access/auth-context';
import { AccountsService } from '../accounts/accounts.service';
import { AuditService } from '../audit/audit.service';
import { conflict, invalidInput } from '../common/errors';
import { KeyedTurns } from '../common/keyed-turns';
import type { Sql } from '../database/db';
import type { Cte } from '../database/statement';
import type { AccountQueueView, QueueSettingsDto, QueueSettingsView, QueueSlotView } from './posting-queue.dto';
import { PostingQueueRepository, ScheduleRow, SLOT_TAKEN_CONSTRAINT, TakenSlot } from './posting-queue.repository';
import { HORIZON_DAYS, nextFreeSlot, occurrencesBetween, QueueSchedule, scheduleProblems, SlotOccurrence, sortSlots } from './queue-slots';

/** A workspace that never saved a schedule has no slots: queueing is off until it does. */
const NO_SCHEDULE: QueueSchedule = { timezone: 'UTC', slots: [] };

const DAY_MS = 86_400_000;

/**
 * How many times a post looks again after another post took the slot it chose: each look sees
 * the slots the others committed, so only as many posts queued at the very same moment as this
 * can push one post on. Past it, a 409 asks to retry.
 */
export const MAX_TAKE_ATTEMPTS = 20;

/**
 * Queued posts of one workspace waiting in this process for their turn (PostingQueueService.inTurn);
 * past it, a 409 asks to retry. Bulk intake queues at most 100 posts at once.
 */
const MAX_WAITING_PER_WORKSPACE = 500;

/** A free slot chosen for a post: the instant, and one row per target to write with the post. */
export interface QueuePlan {
  at: Date;
  slots: TakenSlot[];
  view: QueueSlotView;
}

/**
 * The posting queue (docs/api.md "The posting queue"): a workspace's weekly slots, an account's
 * own slots that replace them for it, and the slots queued posts take. The decisions are in
 * queue-slots.ts (pure); this holds the schedules, reads what is taken, and writes a post's
 * slots with the post (PostsService resolves `"queue": true` into a time and these rows before
 * its usual scheduling path).
 */
@Injectable()
export class PostingQueueService {
  constructor(
    private readonly repo: PostingQueueRepository,
    private readonly accounts: AccountsService,
    private readonly audit: AuditService,
  ) {}

  private readonly turns = new KeyedTurns(MAX_WAITING_PER_WORKSPACE);

  /**
   * Runs `work` (plan a slot, write the post with it) after the workspace's earlier queued posts
   * in this process have been written. Not what keeps two posts off one slot (the database's
   * UNIQUE does that, across processes): it keeps posts queued at once through one process from
   * all planning the same slot and all but one planning again, round after round (measured with
   * 40 posts queued at once through two processes: 137 rolled-back statements without it).
   */
  async inTurn<T>(workspaceId: string, work: () => Promise<T>): Promise<T> {
    const turn = this.turns.run(workspaceId, work);
    if (!turn) throw busy();
    return turn;
  }

  async getWorkspace(workspaceId: string): Promise<QueueSettingsView> {
    const rows = await this.repo.schedules(workspaceId, []);
    return viewOf(rows.find((r) => r.accountId === null) ?? NO_SCHEDULE);
  }

  async putWorkspace(auth: AuthContext, dto: QueueSettingsDto): Promise<QueueSettingsView> {
    const schedule = checked(dto);
    await this.repo.save(auth.workspaceId, null, schedule);
    await this.audit.record(null, auth, {
      kind: 'workspace',
      action: 'queue',
      summary: `Set the posting queue: ${describe(schedule)}`,
      after: { ...schedule },
    });
    return viewOf(schedule);
  }

  /** The schedule an account follows: its own, else the workspace's (404 for an account that is not the workspace's). */
  async getAccount(workspaceId: string, accountId: string): Promise<AccountQueueView> {
    await this.accounts.get(workspaceId, accountId);
    const rows = await this.repo.schedules(workspaceId, [accountId]);
    const own = rows.find((r) => r.accountId === accountId);
    if (own) return { ...viewOf(own), source: 'account' };
    return { ...viewOf(rows.find((r) => r.accountId === null) ?? NO_SCHEDULE), source: 'workspace' };
  }

  async putAccount(auth: AuthContext, accountId: string, dto: QueueSettingsDto): Promise<AccountQueueView> {
    const account = await this.accounts.get(auth.workspaceId, accountId);
    const schedule = checked(dto);
    await this.repo.save(auth.workspaceId, account.id, schedule);
    await this.audit.record(null, auth, {
      kind: 'account',
      action: 'queue',
      subjectId: account.id,
      summary: `Gave “${account.name}” its own posting queue: ${describe(schedule)}`,
      after: { ...schedule },
    });
    return { ...viewOf(schedule), source: 'account' };
  }

  /** The account's own slots removed: it follows the workspace's again (idempotent). */
  async removeAccount(auth: AuthContext, accountId: string): Promise<AccountQueueView> {
    const account = await this.accounts.get(auth.workspaceId, accountId);
    if (await this.repo.removeAccountSchedule(auth.workspaceId, account.id)) {
      await this.audit.record(null, auth, {
        kind: 'account',
        action: 'queue',
        subjectId: account.id,
        summary: `“${account.name}” follows the workspace's posting queue again`,
      });
    }
    return this.getAccount(auth.workspaceId, account.id);
  }

  /** The schedule each account follows (its own, else the workspace's). */
  async schedulesOf(workspaceId: string, accountIds: readonly string[], runner?: Sql): Promise<Map<string, QueueSchedule>> {
    const rows = await this.repo.schedules(workspaceId, accountIds, runner);
    const workspace = rows.find((r) => r.accountId === null) ?? NO_SCHEDULE;
    const own = new Map(rows.filter((r) => r.accountId !== null).map((r) => [r.accountId as string, r]));
    return new Map(accountIds.map((id) => [id, own.get(id) ?? workspace]));
  }

  /**
   * The next slot after `now` free on every one of `accountIds` (and before `before`, a deadline),
   * for post `postId`. A 409 says why there is none: no slots, no slot the targets share, all
   * taken within HORIZON_DAYS, or none before the deadline.
   */
  async plan(
    workspaceId: string,
    postId: string,
    accountIds: readonly string[],
    now: Date,
    before: Date | null,
    runner?: Sql,
  ): Promise<QueuePlan> {
    const schedules = await this.schedulesOf(workspaceId, accountIds, runner);
    const end = new Date(now.getTime() + HORIZON_DAYS * DAY_MS);
    const taken = new Map<string, Set<number>>();
    for (const t of await this.repo.takenBetween(workspaceId, accountIds, now, end, runner)) {
      const set = taken.get(t.accountId) ?? new Set<number>();
      set.add(t.at.getTime());
      taken.set(t.accountId, set);
    }
    const choice = nextFreeSlot({ now, targets: accountIds.map((id) => ({ accountId: id, schedule: schedules.get(id)! })), taken, before });
    if (!choice.ok) {
      switch (choice.reason) {
        case 'no_slots':
          throw conflict(
            choice.accountIds.length === accountIds.length && accountIds.every((id) => schedules.get(id) === schedules.get(accountIds[0]))
              ? 'queue: the posting queue has no slots; set them with PUT /v1/settings/queue (or an account’s own with PUT /v1/accounts/{id}/queue), or give scheduledAt'
              : `queue: no queue slots for account(s) ${choice.accountIds.join(', ')}; set them with PUT /v1/settings/queue or PUT /v1/accounts/{id}/queue, or give scheduledAt`,
          );
        case 'no_common_slot':
          throw conflict(
            `queue: the targets' queues share no slot within ${HORIZON_DAYS} days (an account with its own slots takes only instants that are slots for every target); queue them separately or give scheduledAt`,
          );
        case 'full':
          throw conflict(
            `queue: every queue slot of these accounts within the next ${HORIZON_DAYS} days is taken; add slots or give scheduledAt`,
          );
        case 'deadline':
          throw conflict(`queue: no free queue slot before publishBy (${before?.toISOString()}); give a later publishBy or scheduledAt`);
      }
    }
    const slots = accountIds.map((accountId) => toTaken(postId, accountId, choice.slots.get(accountId)!));
    return { at: choice.at, slots, view: toSlotView(firstOf(slots)) };
  }

  /** The plan's rows as a CTE of the post's INSERT statement: they commit with the post. */
  takeCte(workspaceId: string, plan: QueuePlan): Cte<'queue_slots'> {
    return this.repo.takeCte(workspaceId, plan.slots);
  }

  /**
   * The next free slot taken inside transaction `m` (a draft queued by PATCH): planned, written
   * behind a savepoint, and planned again when another post took that slot meanwhile (its
   * commit is seen by the next read).
   */
  async takeNext(
    m: Sql,
    workspaceId: string,
    postId: string,
    accountIds: readonly string[],
    now: Date,
    before: Date | null,
  ): Promise<QueuePlan> {
    for (let attempt = 0; attempt < MAX_TAKE_ATTEMPTS; attempt++) {
      const plan = await this.plan(workspaceId, postId, accountIds, now, before, m);
      await m.query('SAVEPOINT posting_queue_take');
      try {
        await this.repo.take(m, workspaceId, plan.slots);
        await m.query('RELEASE SAVEPOINT posting_queue_take');
        return plan;
      } catch (err) {
        if (!isSlotTaken(err)) throw err;
        await m.query('ROLLBACK TO SAVEPOINT posting_queue_take');
      }
    }
    throw busy();
  }

  /** A post's slots given back: it was cancelled or given another time. */
  release(m: Sql, workspaceId: string, postId: string): Promise<void> {
    return this.repo.release(m, workspaceId, postId);
  }

  /** The slot each of these posts took (absent: not queued). */
  async slotsOfPosts(workspaceId: string, postIds: readonly string[], runner?: Sql): Promise<Map<string, QueueSlotView>> {
    const out = new Map<string, QueueSlotView>();
    for (const row of await this.repo.ofPosts(workspaceId, postIds, runner)) {
      if (!out.has(row.postId)) out.set(row.postId, toSlotView(row));
    }
    return out;
  }

  /**
   * The calendar's view of the queue in (from, to]: every slot of the workspace's schedule (in its
   * zone) with whether a post took it, and the moved ones marked.
   */
  async week(workspaceId: string, from: Date, to: Date): Promise<{ timezone: string; slots: (SlotOccurrence & { taken: boolean })[] }> {
    const schedule = await this.workspaceSchedule(workspaceId);
    const taken = new Set((await this.repo.takenInRange(workspaceId, from, to)).map((t) => t.at.getTime()));
    return {
      timezone: schedule.timezone,
      slots: occurrencesBetween(schedule, from, to).map((o) => ({ ...o, taken: taken.has(o.at.getTime()) })),
    };
  }

  private async workspaceSchedule(workspaceId: string): Promise<QueueSchedule> {
    const rows = await this.repo.schedules(workspaceId, []);
    return rows.find((r) => r.accountId === null) ?? NO_SCHEDULE;
  }
}

/** True when `err` is a second post taking a slot already taken (the UNIQUE of posting_queue_slots). */
export function isSlotTaken(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, constraint } = err as { code?: unknown; constraint?: unknown };
  return code === '23505' && constraint === SLOT_TAKEN_CONSTRAINT;
}

/** More posts queued at the same moment than MAX_TAKE_ATTEMPTS: the request may be sent again. */
export function busy() {
  return conflict('queue: many posts were queued at this moment and took the free slots first; send the request again');
}

function checked(dto: QueueSettingsDto): QueueSchedule {
  const problems = scheduleProblems(dto);
  if (problems.length > 0) throw invalidInput(problems.join('; '));
  return { timezone: dto.timezone, slots: sortSlots(dto.slots.map((s) => ({ day: s.day, time: s.time }))) };
}

function viewOf(s: QueueSchedule | ScheduleRow): QueueSettingsView {
  return { timezone: s.timezone, slots: sortSlots(s.slots) };
}

function describe(s: QueueSchedule): string {
  return `${s.slots.length} slot${s.slots.length === 1 ? '' : 's'} a week in ${s.timezone}`;
}

function toTaken(postId: string, accountId: string, o: SlotOccurrence): TakenSlot {
  return { postId, accountId, at: o.at, timezone: o.timezone, day: o.day, time: o.time, localTime: o.localTime };
}

/** The post's slot as its answer shows it: the one of its lowest account id (every target's is the same instant). */
function firstOf(slots: readonly TakenSlot[]): TakenSlot {
  return [...slots].sort((a, b) => (a.accountId < b.accountId ? -1 : 1))[0];
}

function toSlotView(t: TakenSlot): QueueSlotView {
  return { at: t.at.toISOString(), timezone: t.timezone, day: t.day, time: t.time, localTime: t.localTime, moved: t.time !== t.localTime };
}
