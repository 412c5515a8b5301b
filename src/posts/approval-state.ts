import type { ApprovalState } from '../approval-policy/approval-transitions';
import type { LockedJob } from '../queue/job-lifecycle.service';
import type { PostRow } from './post.types';

/** A post's state in the approval table (approval-policy/approval-transitions.ts), from its row and its (locked) jobs. */
export function approvalStateOf(
  post: Pick<PostRow, 'draftTargets' | 'approval'>,
  jobs: readonly Pick<LockedJob, 'status' | 'attemptCount'>[],
): Exclude<ApprovalState, 'deleted'> {
  if (post.draftTargets !== null)
    return post.approval === 'pending' ? 'pending_approval' : post.approval === 'expired' ? 'expired' : 'draft';
  if (jobs.length > 0 && jobs.every((j) => j.status === 'cancelled')) return 'cancelled';
  if (jobs.some((j) => j.attemptCount > 0 || (j.status !== 'scheduled' && j.status !== 'paused'))) return 'started';
  return 'scheduled';
}
