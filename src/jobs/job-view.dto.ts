import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import {
  MASTODON_VISIBILITIES,
  PROVIDERS,
  type MastodonOptions,
  type MastodonVisibility,
  Provider,
} from '../connectors/connector.interface';
import type { DeadReason, Decision } from '../retry/decide';
import type { ErrorClass } from '../retry/error-class';
import type { JobStatus } from '../queue/job-lifecycle';
import { ERROR_CLASSES, JOB_STATUSES } from '../vocabulary/vocabulary';
import type { AttemptView, JobPartView, JobView } from './job.types';
import type { JobWithAttempts } from './jobs.service';

/**
 * The answers of /v1/jobs (and the jobs inside a post) as OpenAPI schemas. Each class implements
 * the view the service returns, so a field added to the view does not compile until documented.
 */

// The lists are the vocabulary's (src/vocabulary/vocabulary.ts): one definition.
export { ERROR_CLASSES, JOB_STATUSES } from '../vocabulary/vocabulary';

export const DEAD_REASON_VALUES: readonly DeadReason[] = ['max_attempts', 'permanent', 'poison', 'expired'];
const DECISIONS: readonly Decision[] = ['succeed', 'retry', 'dead', 'pause'];

@ApiSchema({ name: 'MastodonOptions' })
export class MastodonOptionsDto implements MastodonOptions {
  @ApiProperty({
    type: String,
    enum: MASTODON_VISIBILITIES,
    enumName: 'MastodonVisibility',
    nullable: true,
    description: "who sees the status; null: the account's own default",
  })
  visibility!: MastodonVisibility | null;

  @ApiProperty({ type: String, nullable: true, description: 'the content warning; null: none' })
  spoilerText!: string | null;
}

@ApiSchema({ name: 'JobPart' })
export class JobPartDto implements JobPartView {
  @ApiProperty({
    type: 'integer',
    description: "1-based: part 1 is the post's own text, part 2 the thread's first further part",
    example: 2,
  })
  part!: number;

  @ApiProperty()
  text!: string;

  @ApiProperty({ description: 'published on the platform (a retry or a requeue never publishes it again)' })
  published!: boolean;

  @ApiProperty({
    type: String,
    nullable: true,
    description: "the platform's id of this part once published (Bluesky: the record's AT URI)",
    example: 'at://did:plc:abc/app.bsky.feed.post/3lbq7cmi6z22a',
  })
  remoteId!: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'where this part can be seen' })
  remoteUrl!: string | null;
}

@ApiSchema({ name: 'Job' })
export class JobDto implements JobView {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: "the post this job publishes; null for an event endpoint's delivery",
  })
  postId!: string | null;

  @ApiProperty({ format: 'uuid' })
  accountId!: string;

  @ApiProperty({ enum: PROVIDERS, enumName: 'Provider' })
  provider!: Provider;

  @ApiProperty({
    enum: JOB_STATUSES,
    enumName: 'JobStatus',
    description:
      'scheduled: waiting for its time or its next attempt; paused: its account needs re-authentication or is disabled; dead: will not be retried automatically (see the dead-letter queue)',
  })
  status!: JobStatus;

  @ApiProperty({ type: 'integer', description: 'attempts made so far', example: 0 })
  attemptCount!: number;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'when the next attempt is due (scheduled jobs only)' })
  nextAttemptAt!: string | null;

  @ApiProperty({ description: 'sent with every attempt; the same across retries', example: '0b6f1a7e-3c5d-4f43-9a53-6d7f4f1f2a10' })
  idempotencyKey!: string;

  // Nullable enums stay inline: OpenAPI 3.0 cannot mark a $ref nullable.
  @ApiProperty({ type: String, enum: ERROR_CLASSES, nullable: true, description: "class of the last attempt's outcome" })
  errorClass!: ErrorClass | null;

  @ApiProperty({ type: String, nullable: true })
  lastError!: string | null;

  @ApiProperty({ type: String, enum: DEAD_REASON_VALUES, nullable: true, description: 'why a dead job is dead' })
  deadReason!: DeadReason | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: "the platform's id of the published post (Bluesky AT URI, LinkedIn URN, the receiver's id)",
  })
  remoteId!: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'where the published post can be seen, when the platform says' })
  remoteUrl!: string | null;

  @ApiProperty({ description: "the text this job publishes (the target's own text, else the post's)" })
  text!: string;

  @ApiProperty({
    type: [JobPartDto],
    nullable: true,
    description: "a thread's parts, the first included, each with its platform id once published; null for a single post",
  })
  parts!: JobPartDto[] | null;

  @ApiProperty({
    type: MastodonOptionsDto,
    nullable: true,
    description:
      "a Mastodon job's visibility and content warning (POST /v1/posts targets[].visibility, spoilerText); null when it set none, and for other platforms",
  })
  mastodon!: MastodonOptionsDto | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  finishedAt!: string | null;
}

@ApiSchema({ name: 'Attempt' })
export class AttemptDto implements AttemptView {
  @ApiProperty({ type: 'integer', description: "1-based, over the job's whole history", example: 1 })
  number!: number;

  @ApiProperty({ format: 'date-time' })
  startedAt!: string;

  @ApiProperty({ format: 'date-time' })
  finishedAt!: string;

  @ApiProperty({ type: 'integer', nullable: true, description: "the platform's HTTP status, when it answered", example: 503 })
  httpStatus!: number | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'when no HTTP answer came: ECONNREFUSED, ECONNRESET, connect_timeout, total_timeout, blocked_address, worker_lost, …',
  })
  networkError!: string | null;

  @ApiProperty({ enum: ERROR_CLASSES, enumName: 'ErrorClass' })
  errorClass!: ErrorClass;

  @ApiProperty({ enum: DECISIONS, enumName: 'Decision', description: 'what Herald did next' })
  decision!: Decision;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'when the next attempt was scheduled (decision retry)' })
  retryAt!: string | null;

  @ApiProperty({ type: 'integer', example: 120 })
  latencyMs!: number;

  @ApiProperty({ type: String, nullable: true, description: "the start of the platform's answer (bounded)" })
  responseExcerpt!: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'what happened, for a person' })
  message!: string | null;

  @ApiProperty({ description: 'the idempotency key this attempt sent' })
  idempotencyKey!: string;

  @ApiProperty({ type: [String], description: 'things that did not stop the attempt, e.g. a link card that could not be built' })
  warnings!: string[];
}

@ApiSchema({ name: 'JobWithAttempts' })
export class JobWithAttemptsDto extends JobDto implements JobWithAttempts {
  @ApiProperty({ type: [AttemptDto], description: 'oldest first' })
  attempts!: AttemptDto[];
}
