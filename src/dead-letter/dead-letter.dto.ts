import { ApiProperty, ApiPropertyOptional, ApiSchema, IntersectionType, PartialType, PickType } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { PageQuery } from '../common/pagination';
import { PROVIDERS, Provider } from '../connectors/connector.interface';
import { CreatePostDto, ISO_WITH_OFFSET, MAX_THREAD_PARTS, ThreadPartDto } from '../posts/posts.dto';
import { ERROR_CLASSES } from '../jobs/job-view.dto';
import type { ErrorClass } from '../retry/error-class';

const OFFSET_MESSAGE = (field: string) =>
  `${field} must be an ISO 8601 date-time with a time zone offset, e.g. 2026-12-01T09:00:00Z or 2026-12-01T10:00:00+01:00`;

export const DEAD_REASONS = ['max_attempts', 'permanent', 'poison', 'expired'] as const;

/**
 * PATCH /v1/dlq/:jobId. Derived from CreatePostDto (the same class-validator rules, field by
 * field, every one optional), so a DLQ edit can never accept what POST /v1/posts refuses.
 * `null` clears title, link or metadata; the service refuses it for text and media.
 */
@ApiSchema({ name: 'EditThreadPart' })
export class EditThreadPartDto extends PartialType(ThreadPartDto) {
  @ApiProperty({ type: 'integer', minimum: 0, maximum: MAX_THREAD_PARTS - 1, description: "the part's place in `thread` (0: part 2)" })
  @Max(MAX_THREAD_PARTS - 1)
  @Min(0)
  @IsInt({ message: 'index must be an integer' })
  index!: number;
}

@ApiSchema({ name: 'EditDeadJob' })
export class EditDeadJobDto extends PartialType(PickType(CreatePostDto, ['text', 'title', 'link', 'media', 'metadata'] as const)) {
  @ApiPropertyOptional({
    type: [EditThreadPartDto],
    maxItems: MAX_THREAD_PARTS,
    description:
      "a thread's further parts to change, each by its index; absent fields of a part are kept. A part already published cannot change (409)",
  })
  @IsOptional()
  @ValidateNested({ each: true })
  @IsObject({ each: true, message: 'each thread edit must be an object { index, text?, link?, media? }' })
  @Type(() => EditThreadPartDto)
  @ArrayMaxSize(MAX_THREAD_PARTS)
  @ArrayMinSize(1)
  @IsArray()
  thread?: EditThreadPartDto[];
}

/** Query strings carry booleans as text. */
const toBoolean = ({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value);

/** The filters of GET /v1/dlq, also the `filter` of a bulk requeue. */
@ApiSchema({ name: 'DlqFilter' })
export class DlqFilterDto {
  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID('all', { message: 'accountId must be a UUID' })
  @IsString()
  accountId?: string;

  @ApiPropertyOptional({ enum: PROVIDERS, enumName: 'Provider' })
  @IsOptional()
  @IsIn(PROVIDERS, { message: `provider must be one of ${PROVIDERS.join(', ')}` })
  provider?: Provider;

  @ApiPropertyOptional({ enum: ERROR_CLASSES, enumName: 'ErrorClass' })
  @IsOptional()
  @IsIn(ERROR_CLASSES, { message: `errorClass must be one of ${ERROR_CLASSES.join(', ')}` })
  errorClass?: ErrorClass;

  @ApiPropertyOptional({ enum: DEAD_REASONS, enumName: 'DeadReason' })
  @IsOptional()
  @IsIn(DEAD_REASONS, { message: `deadReason must be one of ${DEAD_REASONS.join(', ')}` })
  deadReason?: (typeof DEAD_REASONS)[number];

  @ApiPropertyOptional({ description: 'dead at or after this instant', example: '2026-12-01T00:00:00Z' })
  @IsOptional()
  @Matches(ISO_WITH_OFFSET, { message: OFFSET_MESSAGE('from') })
  @IsString()
  from?: string;

  @ApiPropertyOptional({ description: 'dead before this instant', example: '2026-12-02T00:00:00Z' })
  @IsOptional()
  @Matches(ISO_WITH_OFFSET, { message: OFFSET_MESSAGE('to') })
  @IsString()
  to?: string;

  @ApiPropertyOptional({ description: 'case-insensitive text to find in the last error', maxLength: 200 })
  @IsOptional()
  @MaxLength(200)
  @IsString()
  q?: string;
}

export class ListDlqQuery extends IntersectionType(PageQuery, DlqFilterDto) {
  @ApiPropertyOptional({ enum: ['dead', 'discarded'], default: 'dead', description: 'dead (default) or discarded jobs' })
  @IsOptional()
  @IsIn(['dead', 'discarded'], { message: 'status must be dead or discarded' })
  status?: 'dead' | 'discarded';

  @ApiPropertyOptional({ type: Boolean, description: 'list dead and discarded jobs together' })
  @IsOptional()
  @Transform(toBoolean)
  @IsBoolean({ message: 'includeDiscarded must be true or false' })
  includeDiscarded?: boolean;
}

@ApiSchema({ name: 'Requeue' })
export class RequeueDto {
  @ApiPropertyOptional({ example: '2026-12-01T09:00:00Z', description: 'when to try again (default: now)' })
  @IsOptional()
  @Matches(ISO_WITH_OFFSET, { message: OFFSET_MESSAGE('runAt') })
  @IsString()
  runAt?: string;

  @ApiPropertyOptional({
    description:
      'requeue even though the account needs re-authentication or is disabled: the job waits as paused and goes out once the account is fixed',
  })
  @IsOptional()
  @IsBoolean({ message: 'force must be true or false' })
  force?: boolean;
}

export const MAX_BULK_IDS = 1000;

@ApiSchema({ name: 'BulkRequeue' })
export class BulkRequeueDto extends RequeueDto {
  @ApiPropertyOptional({ type: [String], maxItems: MAX_BULK_IDS })
  @IsOptional()
  @IsUUID('all', { each: true, message: 'ids must contain job ids (UUIDs)' })
  @ArrayMaxSize(MAX_BULK_IDS)
  @ArrayMinSize(1)
  @IsArray()
  ids?: string[];

  @ApiPropertyOptional({ type: DlqFilterDto, description: 'every dead job matching these filters (up to 10,000 per call)' })
  @IsOptional()
  @ValidateNested()
  @Type(() => DlqFilterDto)
  filter?: DlqFilterDto;
}
