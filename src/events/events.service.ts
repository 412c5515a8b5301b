import { Injectable } from '@nestjs/common';
import type { Sql } from '../database/db';
import { EnqueuedEvents, JobLifecycle, NewEvent } from '../queue/job-lifecycle.service';
import { approvalEvent, EventActor, postScheduled, ScheduledTarget } from './event-shapes';

export type { EventActor, ScheduledTarget } from './event-shapes';

/**
 * Herald's own events, written in the transaction of the change they report (docs/events.md
 * "Written with the change"): a module calls one of these with its open transaction (`Sql` of
 * database/db.ts), and the event's deliveries, one job per event endpoint that takes its type,
 * commit with its change or not at all. The deliveries are the queue's jobs (JobLifecycle: the
 * one writer of the jobs' tables), so the engine sends them like any post.
 *
 * Where the events come from:
 * - post.scheduled: the posts module (a post created with a time: embedded in its one statement,
 *   `postScheduledCte`; a draft scheduled: `postScheduled` in its transaction);
 * - post.published, post.failed: the queue itself, in the transaction that ends the job (a
 *   worker's round, the crash recovery, the deadline sweep: src/queue/job-store.service.ts);
 * - account.needs_reauth: the worker's round that decides it (the same place);
 *   account.recovered: the accounts module, in the transaction that reactivates the account;
 * - post.approval_requested, post.approved, post.rejected: the approval policy, in the
 *   transaction that records the step (ApprovalPolicyService.recordStep: every step goes through it).
 */
@Injectable()
export class EventsService {
  constructor(private readonly lifecycle: JobLifecycle) {}

  /** post.scheduled as CTEs of the post's own INSERT statement (one round trip per accepted post). */
  postScheduledCte(input: {
    workspaceId: string;
    postId: string;
    scheduledAt: Date;
    publishBy: Date | null;
    targets: ScheduledTarget[];
    now: Date;
  }): EnqueuedEvents {
    return this.lifecycle.eventsCte([postScheduled(input)]);
  }

  /** post.scheduled in the caller's transaction (a draft scheduled). */
  postScheduled(
    q: Sql,
    input: { workspaceId: string; postId: string; scheduledAt: Date; publishBy: Date | null; targets: ScheduledTarget[]; now: Date },
  ): Promise<number> {
    return this.lifecycle.enqueueEvents(q, { events: [postScheduled(input)] });
  }

  /** account.recovered of accounts the caller's transaction made active again (accounts that publish only). */
  accountsRecovered(q: Sql, accountIds: string[]): Promise<number> {
    return this.lifecycle.enqueueEvents(q, { accounts: { type: 'account.recovered', ids: accountIds } });
  }

  /** post.approval_requested, post.approved, post.rejected, in the transaction of that step. */
  approval(
    q: Sql,
    type: 'post.approval_requested' | 'post.approved' | 'post.rejected',
    input: { workspaceId: string; postId: string; actor: EventActor | null; comment?: string | null; now: Date },
  ): Promise<number> {
    return this.lifecycle.enqueueEvents(q, { events: [approvalEvent(type, input)] });
  }

  /** Any events the caller built (event-shapes.ts), in its transaction. */
  record(q: Sql, events: NewEvent[]): Promise<number> {
    return this.lifecycle.enqueueEvents(q, { events });
  }
}
