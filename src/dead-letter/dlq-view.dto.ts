import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ACCOUNT_STATUSES } from '../accounts/account-view.dto';
import type { AccountStatus } from '../account-state/account-state';
import type { JobPayload } from '../connectors/connector.interface';
import { AttemptDto, JobDto, MastodonOptionsDto } from '../jobs/job-view.dto';
import { ThreadPartViewDto } from '../posts/post-view.dto';
import type { BulkRequeueResult, SkippedJob } from './dead-letter.service';
import { AuditActorDto } from '../audit/audit-view.dto';
import type { AuditAction, AuditView, DlqDetailView, DlqEntryView } from './dead-letter.types';

/**
 * The answers of /v1/dlq as OpenAPI schemas. Each class implements the view the service returns,
 * so a field added to a view does not compile until it is documented here.
 */

@ApiSchema({ name: 'DlqAccount' })
export class DlqAccountDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty()
  name!: string;

  @ApiProperty({ enum: ACCOUNT_STATUSES, enumName: 'AccountStatus' })
  status!: AccountStatus;

  @ApiProperty({ type: String, nullable: true })
  statusReason!: string | null;

  @ApiProperty({ description: 'the account was removed: its jobs cannot be requeued, only discarded' })
  deleted!: boolean;
}

@ApiSchema({ name: 'DlqEntry' })
export class DlqEntryDto extends JobDto implements DlqEntryView {
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'when the job died' })
  deadAt!: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'last edit of the payload through PATCH /v1/dlq/{jobId}' })
  payloadEditedAt!: string | null;

  @ApiProperty({ type: DlqAccountDto })
  account!: DlqAccountDto;
}

@ApiSchema({ name: 'JobPayload' })
export class JobPayloadDto implements JobPayload {
  @ApiProperty()
  text!: string;

  @ApiProperty({ type: String, nullable: true })
  title!: string | null;

  @ApiProperty({ type: String, nullable: true })
  link!: string | null;

  @ApiProperty({ type: [String], description: 'media ids' })
  media!: string[];

  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  metadata!: Record<string, unknown> | null;

  @ApiProperty({ format: 'date-time' })
  scheduledAt!: string;

  @ApiPropertyOptional({ type: [ThreadPartViewDto], description: "a thread's further parts, in order; absent for a single post" })
  thread?: ThreadPartViewDto[];

  @ApiPropertyOptional({
    type: MastodonOptionsDto,
    description:
      "a Mastodon target's visibility and content warning (POST /v1/posts targets[].visibility, spoilerText); absent when it set none",
  })
  mastodon?: MastodonOptionsDto;
}

const AUDIT_ACTIONS: readonly AuditAction[] = ['edit', 'requeue', 'discard'];

@ApiSchema({ name: 'AuditEntry' })
export class AuditDto implements AuditView {
  @ApiProperty({ enum: AUDIT_ACTIONS, enumName: 'AuditAction' })
  action!: AuditAction;

  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'the API key that did it (null: a person, see actor)' })
  apiKeyId!: string | null;

  @ApiProperty({ type: AuditActorDto, description: 'who did it: an API key or a person' })
  actor!: AuditActorDto;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'the changed fields before' })
  before!: Record<string, unknown>;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'the changed fields after' })
  after!: Record<string, unknown>;

  @ApiProperty({ format: 'date-time' })
  at!: string;
}

@ApiSchema({ name: 'DlqDetail' })
export class DlqDetailDto extends DlqEntryDto implements DlqDetailView {
  @ApiProperty({ type: JobPayloadDto, description: 'the payload as the next attempt would send it' })
  payload!: JobPayloadDto;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  publishBy!: string | null;

  @ApiProperty({
    description:
      'the idempotency key a requeue would send: a new one if and only if the payload was edited since the current key was issued',
  })
  requeueIdempotencyKey!: string;

  @ApiProperty({ type: [AttemptDto], description: 'oldest first' })
  attempts!: AttemptDto[];

  @ApiProperty({ type: [AuditDto], description: 'edits, requeues and discards, oldest first' })
  audit!: AuditDto[];
}

const SKIP_REASONS: readonly SkippedJob['reason'][] = ['not_dead', 'account_not_active', 'account_deleted'];

@ApiSchema({ name: 'SkippedJob' })
export class SkippedJobDto implements SkippedJob {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ enum: SKIP_REASONS, enumName: 'RequeueSkipReason' })
  reason!: SkippedJob['reason'];

  @ApiProperty()
  message!: string;
}

@ApiSchema({ name: 'BulkRequeueResult' })
export class BulkRequeueResultDto implements BulkRequeueResult {
  @ApiProperty({ type: 'integer', description: 'how many jobs went back into the queue', example: 2 })
  requeued!: number;

  @ApiProperty({ type: [String], description: 'the ids of the requeued jobs' })
  ids!: string[];

  @ApiProperty({ type: [SkippedJobDto] })
  skipped!: SkippedJobDto[];

  @ApiProperty({ description: 'by filter: more dead jobs matched than one call takes; call again' })
  more!: boolean;
}
