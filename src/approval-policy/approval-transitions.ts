/**
 * A post's approval states and every operation on them, in one table (pure; docs/api.md
 * "Approvals" prints it). The posts module runs it under the post's row lock (PostApprovals,
 * PostsService.update/cancel): the operation either moves the post to the state the table names,
 * or is refused with the table's reason and changes nothing. test/approval-transitions.test.ts
 * runs every operation from every state on PostgreSQL and checks the answer and the rows.
 *
 * The states, as a post's row and jobs show them:
 * - `draft`: kept without a time, no jobs;
 * - `pending_approval`: waits for an owner's decision, no jobs (its accounts and the time asked for are kept);
 * - `scheduled`: has jobs, none started (approved, or never needed approval);
 * - `started`: a job is in flight or finished (published, failed, part cancelled): no more edits;
 * - `cancelled`: every job cancelled;
 * - `expired`: approved after its deadline, nothing was published (terminal);
 * - `deleted`: a draft or a post waiting for approval that was cancelled (the row is gone).
 */
export const APPROVAL_STATES = ['draft', 'pending_approval', 'scheduled', 'started', 'cancelled', 'expired'] as const;
export type ApprovalState = (typeof APPROVAL_STATES)[number] | 'deleted';

/**
 * - submit: POST /v1/posts/{id}/submit;
 * - schedule: a post given a time to go out (POST /v1/posts, PATCH of a draft with status scheduled);
 * - approve / reject: POST /v1/posts/{id}/approve | reject, by an owner or a client reviewer;
 * - edit: PATCH /v1/posts/{id} (content or time);
 * - cancel: DELETE /v1/posts/{id}.
 */
export const APPROVAL_OPERATIONS = ['submit', 'schedule', 'approve', 'reject', 'edit', 'cancel'] as const;
export type ApprovalOperation = (typeof APPROVAL_OPERATIONS)[number];

/** What decides between two outcomes of one operation. */
export interface TransitionFacts {
  /** Would this caller's post need approval now (approval-policy.ts needsApproval)? */
  approvalRequired: boolean;
  /** Has the post's deadline (publishBy) passed? */
  deadlinePassed: boolean;
}

export type Outcome = { ok: true; to: ApprovalState; why: string } | { ok: false; reason: string };

interface Row {
  from: Exclude<ApprovalState, 'deleted'>;
  op: ApprovalOperation;
  /** When set, the row applies only when this fact has this value. */
  when?: { fact: keyof TransitionFacts; is: boolean };
  to?: ApprovalState;
  why?: string;
  /** A refusal (409): the reason, said to the caller. */
  refused?: string;
}

const go = (from: Row['from'], op: ApprovalOperation, to: ApprovalState, why: string, when?: Row['when']): Row => ({
  from,
  op,
  to,
  why,
  when,
});
const no = (from: Row['from'], op: ApprovalOperation, refused: string, when?: Row['when']): Row => ({ from, op, refused, when });
const required = { fact: 'approvalRequired', is: true } as const;
const notRequired = { fact: 'approvalRequired', is: false } as const;

const NOT_WAITING = 'is not waiting for approval';
/** PostsService.update says how many jobs started after this prefix. */
const EDIT_STARTED = 'this post can no longer be edited: its delivery has started (edit a failed job in the dead-letter queue instead)';
const EDIT_CANCELLED = 'this post can no longer be edited: it was cancelled';

export const APPROVAL_TRANSITIONS: readonly Row[] = [
  go('draft', 'submit', 'pending_approval', 'the author asks for approval: the owners are told by mail', required),
  no(
    'draft',
    'submit',
    'approval is not required for this post (the workspace approval mode does not ask it of you): schedule the draft instead (PATCH /v1/posts/{id} with status "scheduled")',
    notRequired,
  ),
  go('draft', 'schedule', 'pending_approval', 'a post that needs approval waits for it instead of being scheduled', required),
  go('draft', 'schedule', 'scheduled', 'no approval needed: its jobs are written', notRequired),
  no('draft', 'approve', `this post is a draft: it ${NOT_WAITING} (its author submits it first)`),
  no('draft', 'reject', `this post is a draft: it ${NOT_WAITING}`),
  go('draft', 'edit', 'draft', 'a draft is edited freely'),
  go('draft', 'cancel', 'deleted', 'a draft is deleted (nothing of it was queued)'),

  no('pending_approval', 'submit', 'this post is already waiting for approval'),
  go('pending_approval', 'schedule', 'pending_approval', 'it still waits for approval'),
  go(
    'pending_approval',
    'approve',
    'scheduled',
    'approved: its jobs are written in the statement that ends the wait (due at once when its time has passed)',
    {
      fact: 'deadlinePassed',
      is: false,
    },
  ),
  go('pending_approval', 'approve', 'expired', 'approved after its deadline: nothing is published', { fact: 'deadlinePassed', is: true }),
  go('pending_approval', 'reject', 'draft', 'sent back to its author as a draft, with the comment'),
  go('pending_approval', 'edit', 'pending_approval', 'edited while it waits: it still waits'),
  go('pending_approval', 'cancel', 'deleted', 'withdrawn: deleted like a draft (nothing of it was queued)'),

  no('scheduled', 'submit', `this post is already scheduled: it ${NOT_WAITING}`),
  go('scheduled', 'schedule', 'pending_approval', 'given a time again: an edit, which needs approval again', required),
  go('scheduled', 'schedule', 'scheduled', 'given a time again: an edit, moved before any job started', notRequired),
  no('scheduled', 'approve', `this post is already scheduled: it ${NOT_WAITING}`),
  no('scheduled', 'reject', `this post is already scheduled: it ${NOT_WAITING}`),
  go(
    'scheduled',
    'edit',
    'pending_approval',
    'an edit of a post that needs approval needs it again: its jobs are removed in the same transaction',
    required,
  ),
  go('scheduled', 'edit', 'scheduled', 'edited or moved before any job started', notRequired),
  go('scheduled', 'cancel', 'cancelled', 'its jobs are cancelled'),

  no('started', 'submit', `delivery of this post has started: it ${NOT_WAITING}`),
  no('started', 'schedule', EDIT_STARTED),
  no('started', 'approve', `delivery of this post has started: it ${NOT_WAITING}`),
  no('started', 'reject', `delivery of this post has started: it ${NOT_WAITING}`),
  no('started', 'edit', EDIT_STARTED),
  go('started', 'cancel', 'started', 'the jobs still waiting are cancelled; attempts in flight finish, finished jobs keep their outcome'),

  no('cancelled', 'submit', `this post was cancelled: it ${NOT_WAITING}`),
  no('cancelled', 'schedule', EDIT_CANCELLED),
  no('cancelled', 'approve', `this post was cancelled: it ${NOT_WAITING}`),
  no('cancelled', 'reject', `this post was cancelled: it ${NOT_WAITING}`),
  no('cancelled', 'edit', EDIT_CANCELLED),
  go('cancelled', 'cancel', 'cancelled', 'already cancelled: nothing changes'),

  no('expired', 'submit', 'this post expired (approved after its deadline): schedule a new post'),
  no('expired', 'schedule', 'this post expired (approved after its deadline): schedule a new post'),
  no('expired', 'approve', 'this post expired (approved after its deadline): it was already decided'),
  no('expired', 'reject', 'this post expired (approved after its deadline): it was already decided'),
  no('expired', 'edit', 'this post expired (approved after its deadline): schedule a new post'),
  go('expired', 'cancel', 'deleted', 'an expired post is deleted (nothing of it was queued)'),
];

/** The outcome of `op` on a post in `from`, given the facts (pure). Exactly one row applies. */
export function approvalTransition(from: Exclude<ApprovalState, 'deleted'>, op: ApprovalOperation, facts: TransitionFacts): Outcome {
  const rows = APPROVAL_TRANSITIONS.filter((r) => r.from === from && r.op === op && (!r.when || facts[r.when.fact] === r.when.is));
  if (rows.length !== 1) throw new Error(`approval table: ${rows.length} rows for ${op} from ${from}`);
  const row = rows[0];
  return row.refused !== undefined ? { ok: false, reason: row.refused } : { ok: true, to: row.to as ApprovalState, why: row.why ?? '' };
}
