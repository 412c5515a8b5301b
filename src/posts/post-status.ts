/**
 * A post's status, derived from its jobs (docs/api.md "Concepts"); `draft` is a post kept without
 * a time, which has no jobs yet (PostsService.toView says it, not this function).
 */
export type PostStatus = 'draft' | 'scheduled' | 'publishing' | 'published' | 'partially_failed' | 'failed' | 'cancelled';

export interface JobStatusInput {
  status: 'scheduled' | 'in_progress' | 'succeeded' | 'paused' | 'dead' | 'cancelled' | 'discarded';
  attemptCount: number;
}

/**
 * - cancelled: every job cancelled;
 * - published: every other job succeeded;
 * - failed: every other job dead or discarded;
 * - partially_failed: some succeeded, the rest dead or discarded;
 * - scheduled: no attempt started yet;
 * - publishing: otherwise (a paused job keeps its post publishing).
 */
export function derivePostStatus(jobs: JobStatusInput[]): PostStatus {
  const live = jobs.filter((j) => j.status !== 'cancelled');
  if (live.length === 0) return 'cancelled';
  const succeeded = live.filter((j) => j.status === 'succeeded').length;
  const failed = live.filter((j) => j.status === 'dead' || j.status === 'discarded').length;
  if (succeeded === live.length) return 'published';
  if (failed === live.length) return 'failed';
  if (succeeded > 0 && succeeded + failed === live.length) return 'partially_failed';
  if (live.every((j) => j.attemptCount === 0 && (j.status === 'scheduled' || j.status === 'paused'))) return 'scheduled';
  return 'publishing';
}
