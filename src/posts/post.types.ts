import type { ThreadPart } from '../connectors/connector.interface';
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
  /** The thread's further parts (2–25), or null for a single post. */
  thread: ThreadPart[] | null;
  scheduledAt: Date;
  publishBy: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface PostView {
  id: string;
  status: PostStatus;
  text: string;
  title: string | null;
  link: string | null;
  media: string[];
  thread: ThreadPart[] | null;
  scheduledAt: string;
  publishBy: string | null;
  metadata: Record<string, unknown> | null;
  createdAt: string;
  updatedAt: string;
  jobs: JobView[];
}
