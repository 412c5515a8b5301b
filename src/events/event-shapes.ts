import { randomUUID } from 'node:crypto';
import type { NewEvent } from '../queue/job-lifecycle.service';
import type { EventType } from '../vocabulary/vocabulary';

/**
 * The events whose content the writing module knows (docs/events.md lists every shape; the
 * outcome events post.published and post.failed, and the account events, are read from the
 * rows their change leaves: src/queue/sql/enqueue-events.ts). Pure: the time and the id are
 * passed in (or a fresh random id), so a test can build the exact event a change writes.
 */

/** A post's job as post.scheduled names it. */
export interface ScheduledTarget {
  jobId: string;
  accountId: string;
  provider: string;
  /** `scheduled`, or `paused` while its account needs a person. */
  status: string;
}

/** post.scheduled: a post got its jobs (created with a time, a draft scheduled, or approved). */
export function postScheduled(input: {
  workspaceId: string;
  postId: string;
  scheduledAt: Date;
  publishBy: Date | null;
  targets: ScheduledTarget[];
  now: Date;
  id?: string;
}): NewEvent {
  return {
    workspaceId: input.workspaceId,
    id: input.id ?? randomUUID(),
    type: 'post.scheduled',
    occurredAt: input.now,
    data: {
      postId: input.postId,
      scheduledAt: input.scheduledAt.toISOString(),
      publishBy: input.publishBy?.toISOString() ?? null,
      targets: input.targets.map((t) => ({ jobId: t.jobId, accountId: t.accountId, provider: t.provider, status: t.status })),
    },
  };
}

/** Who took an approval step: a person, an API key, or a reviewer of a client review link. */
export interface EventActor {
  kind: string;
  id: string;
  label: string;
}

/** The approvals' events (docs/events.md): who asked or decided, and the comment of a rejection. */
export function approvalEvent(
  type: Extract<EventType, 'post.approval_requested' | 'post.approved' | 'post.rejected'>,
  input: { workspaceId: string; postId: string; actor: EventActor | null; comment?: string | null; now: Date; id?: string },
): NewEvent {
  return {
    workspaceId: input.workspaceId,
    id: input.id ?? randomUUID(),
    type,
    occurredAt: input.now,
    data: {
      postId: input.postId,
      by: input.actor,
      ...(type === 'post.rejected' ? { comment: input.comment ?? null } : {}),
    },
  };
}
