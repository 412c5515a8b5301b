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
  scheduledAt: string;
  publishBy: string | null;
  metadata: Record<string, unknown> | null;
  createdAt: string;
  updatedAt: string;
  jobs: JobView[];
}
