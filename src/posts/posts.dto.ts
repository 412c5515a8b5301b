import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { PageQuery } from '../common/pagination';
import { MASTODON_VISIBILITIES, type MastodonVisibility } from '../connectors/connector.interface';
import { MAX_IMAGES_PER_POST, PLATFORM_LIMITS } from './platform-rules';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  IsUrl,
  IsUUID,
  Matches,
  MaxLength,
  registerDecorator,
  ValidateNested,
  ValidationArguments,
  ValidationOptions,
} from 'class-validator';

/** The longest content warning taken (the instance also counts it with the text against its own limit). */
export const MAX_SPOILER_LENGTH = 1_000;

// Decorators run bottom-up and the pipe stops at a field's first failure: the type check
// sits closest to the property, so a number gets "must be a string", not a length rule.

/** ISO 8601 with a date, a time and an explicit offset: "2026-12-01T09:00:00+01:00" or "…Z". */
export const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
const OFFSET_MESSAGE = (field: string) =>
  `${field} must be an ISO 8601 date-time with a time zone offset, e.g. 2026-12-01T09:00:00Z or 2026-12-01T10:00:00+01:00`;

export const MAX_METADATA_BYTES = 16 * 1024;

/** A JSON object whose serialised form is at most `bytes` bytes. */
function MaxJsonBytes(bytes: number, options?: ValidationOptions) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'maxJsonBytes',
      target: target.constructor,
      propertyName,
      options: { message: `${propertyName} must be at most ${bytes / 1024} KB as JSON`, ...options },
      validator: {
        validate: (value: unknown) => Buffer.byteLength(JSON.stringify(value ?? null), 'utf8') <= bytes,
      },
    });
}

/** The 400 for too many images: the API's cap is the most any platform takes (platform-rules.ts). */
const MEDIA_COUNT_MESSAGE = ({ value }: ValidationArguments): string =>
  `media has ${Array.isArray(value) ? value.length : 0} images; a post takes at most ${MAX_IMAGES_PER_POST} (the most any platform takes; each target's platform may take fewer)`;

/** "bluesky 4, linkedin 20, webhook 4": each platform's images per post, for the OpenAPI document. */
const IMAGES_BY_PLATFORM = Object.entries(PLATFORM_LIMITS)
  .map(([provider, limits]) => `${provider} ${limits.maxImages}`)
  .join(', ');

const HTTP_URL = { protocols: ['http', 'https'], require_protocol: true, require_tld: false, allow_underscores: true };

@ApiSchema({ name: 'Target' })
export class TargetDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  @IsString()
  accountId!: string;

  @ApiPropertyOptional({ description: "text for this account only (its platform's limits apply)", maxLength: 10_000 })
  @IsOptional()
  @MaxLength(10_000)
  @IsString()
  text?: string;

  @ApiPropertyOptional({
    enum: MASTODON_VISIBILITIES,
    enumName: 'MastodonVisibility',
    description:
      "Mastodon accounts only: who sees the status (every part of a thread): `public` (everyone, and the public timelines), `unlisted` (everyone, not the public timelines), `private` (followers only), `direct` (the accounts it mentions only). Left out: the account's own default on its instance",
  })
  @IsOptional()
  @IsIn(MASTODON_VISIBILITIES, { message: `visibility must be one of: ${MASTODON_VISIBILITIES.join(', ')}` })
  @IsString()
  visibility?: MastodonVisibility;

  @ApiPropertyOptional({
    maxLength: MAX_SPOILER_LENGTH,
    example: 'Spoilers for the season finale',
    description:
      'Mastodon accounts only: a content warning, shown before the text, which stays hidden until the reader opens it (every part of a thread). The instance counts it with the text against its character limit',
  })
  @IsOptional()
  @MaxLength(MAX_SPOILER_LENGTH)
  @IsNotEmpty({ message: 'spoilerText must not be empty (leave it out for no content warning)' })
  @IsString()
  spoilerText?: string;
}

/**
 * A thread's maximum number of further parts, and its minimum (docs/api.md "Threads"): 1 to 25
 * further parts, a thread of 2 to 26 posts. A post with one reply is the most common thread.
 */
export const MAX_THREAD_PARTS = 25;
export const MIN_THREAD_PARTS = 1;

/** The 400 for a thread of the wrong length, naming the rule and what was sent. */
export const THREAD_LENGTH_MESSAGE = ({ value }: ValidationArguments): string => {
  const n = Array.isArray(value) ? value.length : 0;
  const hint = n === 0 ? ': a single post has no `thread` (PATCH takes null to drop one)' : '';
  return `thread takes ${MIN_THREAD_PARTS} to ${MAX_THREAD_PARTS} further parts (a thread of ${MIN_THREAD_PARTS + 1} to ${MAX_THREAD_PARTS + 1} posts), this one has ${n}${hint}`;
};

@ApiSchema({ name: 'ThreadPart' })
export class ThreadPartDto {
  @ApiProperty({ maxLength: 10_000, example: 'Part two: what changed under the hood.' })
  @MaxLength(10_000)
  @IsNotEmpty()
  @IsString()
  text!: string;

  @ApiPropertyOptional({ example: 'https://example.com/blog/herald-1-0#engine' })
  @IsOptional()
  @IsUrl(HTTP_URL, { message: 'link must be an absolute http(s) URL' })
  @MaxLength(2048)
  @IsString()
  link?: string;

  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_IMAGES_PER_POST,
    description: "ids from POST /v1/media (each with its alt text), as many as the targets' platforms take",
  })
  @IsOptional()
  @IsUUID('all', { each: true, message: 'media must contain media ids (UUIDs)' })
  @ArrayMaxSize(MAX_IMAGES_PER_POST, { message: MEDIA_COUNT_MESSAGE })
  @IsArray()
  media?: string[];
}

/** What a new post is: scheduled (the default) or a draft. */
export const CREATE_STATUSES = ['scheduled', 'draft'] as const;

@ApiSchema({ name: 'CreatePost' })
export class CreatePostDto {
  @ApiProperty({ maxLength: 10_000, example: 'Herald 1.0 is out!' })
  @MaxLength(10_000)
  @IsNotEmpty()
  @IsString()
  text!: string;

  @ApiPropertyOptional({ maxLength: 300 })
  @IsOptional()
  @MaxLength(300)
  @IsString()
  title?: string;

  @ApiPropertyOptional({ example: 'https://example.com/blog/herald-1-0' })
  @IsOptional()
  @IsUrl(HTTP_URL, { message: 'link must be an absolute http(s) URL' })
  @MaxLength(2048)
  @IsString()
  link?: string;

  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_IMAGES_PER_POST,
    description: `ids from POST /v1/media, in the order they are shown; each target takes as many as its platform does (${IMAGES_BY_PLATFORM})`,
  })
  @IsOptional()
  @IsUUID('all', { each: true, message: 'media must contain media ids (UUIDs)' })
  @ArrayMaxSize(MAX_IMAGES_PER_POST, { message: MEDIA_COUNT_MESSAGE })
  @IsArray()
  media?: string[];

  @ApiPropertyOptional({
    type: [ThreadPartDto],
    minItems: MIN_THREAD_PARTS,
    maxItems: MAX_THREAD_PARTS,
    description:
      'further parts, in order, published after the first (`text`, `link`, `media` above): 1 to 25, a thread of 2 to 26 posts. Bluesky replies each to the previous one, a webhook gets them all in one delivery; LinkedIn accounts refuse threads',
  })
  @IsOptional()
  @ValidateNested({ each: true })
  @IsObject({ each: true, message: 'each thread part must be an object { text, link?, media? }' })
  @Type(() => ThreadPartDto)
  @ArrayMaxSize(MAX_THREAD_PARTS, { message: THREAD_LENGTH_MESSAGE })
  @ArrayMinSize(MIN_THREAD_PARTS, { message: THREAD_LENGTH_MESSAGE })
  @IsArray()
  thread?: ThreadPartDto[];

  @ApiProperty({ type: [TargetDto], minItems: 1, maxItems: 20 })
  @ValidateNested({ each: true })
  // ValidateNested alone lets an array through where an object belongs (`targets: [[…]]`), which
  // reached the service as a target without an accountId: a 500.
  @IsObject({ each: true, message: 'each target must be an object { accountId, text?, visibility?, spoilerText? }' })
  @Type(() => TargetDto)
  @ArrayMaxSize(20)
  @ArrayMinSize(1)
  @IsArray()
  targets!: TargetDto[];

  @ApiPropertyOptional({
    enum: CREATE_STATUSES,
    // No `default:` here: generated clients (openapi-typescript) would make a field with a default required.
    description:
      '`scheduled` when left out. `draft`: keep the post without a time, never published until scheduled with `PATCH /v1/posts/{id}` `{ "status": "scheduled" }` (a draft takes no `scheduledAt` or `publishBy`; platform limits are checked when it is scheduled)',
  })
  @IsOptional()
  @IsIn(CREATE_STATUSES, { message: `status must be one of: ${CREATE_STATUSES.join(', ')}` })
  status?: (typeof CREATE_STATUSES)[number];

  @ApiPropertyOptional({ example: '2026-12-01T09:00:00Z', description: 'default: now' })
  @IsOptional()
  @Matches(ISO_WITH_OFFSET, { message: OFFSET_MESSAGE('scheduledAt') })
  @IsString()
  scheduledAt?: string;

  @ApiPropertyOptional({ example: '2026-12-01T12:00:00Z', description: 'deadline: no attempt starts after it' })
  @IsOptional()
  @Matches(ISO_WITH_OFFSET, { message: OFFSET_MESSAGE('publishBy') })
  @IsString()
  publishBy?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'any JSON object up to 16 KB, passed to webhooks' })
  @IsOptional()
  @MaxJsonBytes(MAX_METADATA_BYTES)
  @IsObject()
  metadata?: Record<string, unknown>;
}

@ApiSchema({ name: 'UpdatePost' })
export class UpdatePostDto {
  @ApiPropertyOptional({
    enum: ['scheduled'],
    description:
      'on a draft: schedule it now, at `scheduledAt` (default: now), with its jobs; platform limits are checked then. A scheduled post does not go back to being a draft.',
  })
  @IsOptional()
  @IsIn(['scheduled'], { message: 'status can only be set to scheduled (to schedule a draft)' })
  status?: 'scheduled';

  @ApiPropertyOptional({
    type: [TargetDto],
    minItems: 1,
    maxItems: 20,
    description: "a draft's accounts (replaced as a whole); the accounts of a scheduled post cannot change",
  })
  @IsOptional()
  @ValidateNested({ each: true })
  @IsObject({ each: true, message: 'each target must be an object { accountId, text?, visibility?, spoilerText? }' })
  @Type(() => TargetDto)
  @ArrayMaxSize(20)
  @ArrayMinSize(1)
  @IsArray()
  targets?: TargetDto[];

  @ApiPropertyOptional({ maxLength: 10_000 })
  @IsOptional()
  @MaxLength(10_000)
  @IsNotEmpty()
  @IsString()
  text?: string;

  @ApiPropertyOptional({ maxLength: 300, nullable: true })
  @IsOptional()
  @MaxLength(300)
  @IsString()
  title?: string | null;

  @ApiPropertyOptional({ nullable: true })
  @IsOptional()
  @IsUrl(HTTP_URL, { message: 'link must be an absolute http(s) URL' })
  @MaxLength(2048)
  @IsString()
  link?: string | null;

  @ApiPropertyOptional({ type: [String], maxItems: MAX_IMAGES_PER_POST })
  @IsOptional()
  @IsUUID('all', { each: true, message: 'media must contain media ids (UUIDs)' })
  @ArrayMaxSize(MAX_IMAGES_PER_POST, { message: MEDIA_COUNT_MESSAGE })
  @IsArray()
  media?: string[];

  @ApiPropertyOptional({
    type: [ThreadPartDto],
    nullable: true,
    minItems: MIN_THREAD_PARTS,
    maxItems: MAX_THREAD_PARTS,
    description: 'the whole thread again, 1 to 25 further parts (it replaces the old one); null makes the post a single post',
  })
  @IsOptional()
  @ValidateNested({ each: true })
  @IsObject({ each: true, message: 'each thread part must be an object { text, link?, media? }' })
  @Type(() => ThreadPartDto)
  @ArrayMaxSize(MAX_THREAD_PARTS, { message: THREAD_LENGTH_MESSAGE })
  @ArrayMinSize(MIN_THREAD_PARTS, { message: THREAD_LENGTH_MESSAGE })
  @IsArray()
  thread?: ThreadPartDto[] | null;

  @ApiPropertyOptional()
  @IsOptional()
  @Matches(ISO_WITH_OFFSET, { message: OFFSET_MESSAGE('scheduledAt') })
  @IsString()
  scheduledAt?: string;

  @ApiPropertyOptional({ nullable: true })
  @IsOptional()
  @Matches(ISO_WITH_OFFSET, { message: OFFSET_MESSAGE('publishBy') })
  @IsString()
  publishBy?: string | null;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true, description: 'null clears it' })
  @IsOptional()
  @MaxJsonBytes(MAX_METADATA_BYTES)
  @IsObject()
  metadata?: Record<string, unknown> | null;
}

export const POST_STATUSES = [
  'draft',
  'pending_approval',
  'expired',
  'scheduled',
  'publishing',
  'published',
  'partially_failed',
  'failed',
  'cancelled',
] as const;

export class ListPostsQuery extends PageQuery {
  @ApiPropertyOptional({ enum: POST_STATUSES, enumName: 'PostStatus' })
  @IsOptional()
  @IsIn(POST_STATUSES)
  status?: (typeof POST_STATUSES)[number];

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'scheduled at or after this instant (ISO 8601 with an offset)',
    example: '2026-12-01T00:00:00Z',
  })
  @IsOptional()
  @Matches(ISO_WITH_OFFSET, { message: OFFSET_MESSAGE('from') })
  from?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'scheduled before this instant (ISO 8601 with an offset)',
    example: '2026-12-02T00:00:00Z',
  })
  @IsOptional()
  @Matches(ISO_WITH_OFFSET, { message: OFFSET_MESSAGE('to') })
  to?: string;
}
