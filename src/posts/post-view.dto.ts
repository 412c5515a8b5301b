import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { ThreadPart } from '../connectors/connector.interface';
import { JobDto } from '../jobs/job-view.dto';
import type { PostStatus } from './post-status';
import type { PostView } from './post.types';
import { POST_STATUSES, TargetDto } from './posts.dto';

@ApiSchema({ name: 'ThreadPartView' })
export class ThreadPartViewDto implements ThreadPart {
  @ApiProperty()
  text!: string;

  @ApiProperty({ type: String, nullable: true })
  link!: string | null;

  @ApiProperty({ type: [String], description: 'media ids, in order' })
  media!: string[];
}

/** The answer of /v1/posts as an OpenAPI schema; it implements PostView, so the two cannot drift apart. */
@ApiSchema({ name: 'Post' })
export class PostDto implements PostView {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({
    enum: POST_STATUSES,
    enumName: 'PostStatus',
    description:
      "draft: kept without a time, no jobs yet (see draftTargets); pending_approval: waits for an owner's approval, no jobs yet (see draftTargets; scheduledAt is the time asked for, null: when approved); expired: approved after its deadline, nothing was published; otherwise derived from its jobs: cancelled (all cancelled), published (all others succeeded), failed (all others dead or discarded), partially_failed (some succeeded, the rest dead or discarded), scheduled (no attempt started), publishing (otherwise)",
  })
  status!: PostStatus;

  @ApiProperty({ example: 'Herald 1.0 is out!' })
  text!: string;

  @ApiProperty({ type: String, nullable: true })
  title!: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'https://example.com/blog/herald-1-0' })
  link!: string | null;

  @ApiProperty({ type: [String], description: 'media ids, in order' })
  media!: string[];

  @ApiProperty({
    type: [ThreadPartViewDto],
    nullable: true,
    description: "the thread's further parts, in order after the first (text, link, media above); null for a single post",
  })
  thread!: ThreadPartViewDto[] | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'null for a draft' })
  scheduledAt!: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'no attempt starts after it' })
  publishBy!: string | null;

  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, description: 'passed to webhooks as given' })
  metadata!: Record<string, unknown> | null;

  @ApiProperty({
    type: [TargetDto],
    nullable: true,
    description: "a draft's accounts (it has no jobs until scheduled); null for any other post (see jobs)",
  })
  draftTargets!: TargetDto[] | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;

  @ApiProperty({ type: [JobDto], description: 'one job per target (none for a draft)' })
  jobs!: JobDto[];
}
