import type { MastodonVisibility, ThreadPart } from '../connectors/connector.interface';
import type { JobView } from '../jobs/job.types';
import type { PostStatus } from './post-status';

export interface PostRow {
  id: string;
  workspaceId: string;
  text: string;
  title: string | null;
  link: string | null;
  media: string[];
  metadata: Record<string, unknown> | null;
  /** The thread's further parts (1–25: a thread of 2 to 26 posts), or null for a single post. */
  thread: ThreadPart[] | null;
  /** null for a draft (and only for a draft). */
  scheduledAt: Date | null;
  publishBy: Date | null;
  /** The accounts a draft will go to once scheduled; null for every post that has jobs. */
  draftTargets: DraftTarget[] | null;
  /**
   * `pending`: waits for approval (no jobs; draftTargets kept, scheduledAt/publishBy as asked,
   * scheduledAt null meaning "when approved"); `expired`: approved after its deadline, never
   * published; null otherwise.
   */
  approval: 'pending' | 'expired' | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A target of a draft, as POST /v1/posts takes it. */
export interface DraftTarget {
  accountId: string;
  text?: string;
  /** Mastodon targets only. */
  visibility?: MastodonVisibility;
  spoilerText?: string;
}

/** A post that is not a draft (it has a time and jobs). */
export type ScheduledPostRow = PostRow & { scheduledAt: Date; draftTargets: null; approval: null };

export interface PostView {
  id: string;
  status: PostStatus;
  text: string;
  title: string | null;
  link: string | null;
  media: string[];
  thread: ThreadPart[] | null;
  scheduledAt: string | null;
  publishBy: string | null;
  metadata: Record<string, unknown> | null;
  draftTargets: DraftTarget[] | null;
  createdAt: string;
  updatedAt: string;
  jobs: JobView[];
}
