import type { PostStatusFromJobs } from '../queue/post-status';

/**
 * A post's status: `draft` for a post kept without a time, which has no jobs yet (this module
 * says it: PostsService.toView, PostsRepository.list); any other post's is derived from its jobs
 * (docs/api.md "Concepts") by the queue's one derivation, in TypeScript and in SQL from one table
 * of rules (queue/post-status.ts).
 */
export type PostStatus = 'draft' | PostStatusFromJobs;
