import type { PostStatusFromJobs } from '../queue/post-status';

/**
 * A post's status: `draft` for a post kept without a time, which has no jobs yet (this module
 * says it: PostsService.toView, PostsRepository.list); any other post's is derived from its jobs
 * (docs/api.md "Concepts") by the queue's one derivation, in TypeScript and in SQL from one table
 * of rules (queue/post-status.ts).
 */
export type PostStatus = 'draft' | 'pending_approval' | 'expired' | PostStatusFromJobs;

/**
 * A post without jobs says its status itself: `pending_approval` while it waits for an owner's
 * decision, `expired` when it was approved after its deadline (nothing published), `draft`
 * otherwise (approvals: src/approval-policy/approval-transitions.ts).
 */
export function heldStatus(approval: 'pending' | 'expired' | null): 'draft' | 'pending_approval' | 'expired' {
  return approval === 'pending' ? 'pending_approval' : approval === 'expired' ? 'expired' : 'draft';
}
