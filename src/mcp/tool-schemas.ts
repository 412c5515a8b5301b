import type { Type } from '@nestjs/common';
import * as z from 'zod';
import { MAX_PAGE_SIZE, PageQuery } from '../common/pagination';
import { DEAD_REASONS, EditDeadJobDto, EditThreadPartDto, ListDlqQuery, RequeueDto } from '../dead-letter/dead-letter.dto';
import { MAX_IMAGES_PER_POST } from '../posts/platform-rules';
import {
  CREATE_STATUSES,
  CreatePostDto,
  ISO_WITH_OFFSET,
  ListPostsQuery,
  MAX_METADATA_BYTES,
  MAX_SPOILER_LENGTH,
  MAX_THREAD_PARTS,
  MIN_THREAD_PARTS,
  POST_STATUSES,
  TargetDto,
  ThreadPartDto,
} from '../posts/posts.dto';
import { ERROR_CLASSES, MASTODON_VISIBILITIES, PROVIDERS } from '../vocabulary/vocabulary';
import { CalendarWeekInput } from './calendar-week.dto';
import { dtoFields } from './dto-fields';

export { dtoFields };

/**
 * The input schemas the MCP tools advertise (tools/list), as JSON Schema written from zod, the
 * way the SDK takes them.
 *
 * Which fields a tool takes, and which of them may be left out, come from the REST route's DTO
 * class itself (class-validator's metadata: its properties, @IsOptional()), so the advertised
 * input cannot name a field the route does not take, or miss one it does (a field another
 * change adds to a DTO is advertised at once). Each field's type, limits and description are
 * written here in zod, from the same constants the DTOs use; tool-schemas.spec.ts fails for a
 * DTO field with no description here.
 *
 * They describe; they do not decide. The SDK parses a call's arguments with the registered
 * schema before the tool runs, and a refusal there would carry zod's wording, not the API's. So
 * what is registered is `advertised(shape)`: a schema that takes any object and keeps every field,
 * carrying the precise one as its JSON Schema (zod merges a schema's metadata into the JSON Schema
 * it writes). The tool then validates with class-validator on the DTO classes through the API's
 * own ValidationPipe (tool-input.ts), so a bad field gets the REST 400's message, word for word.
 */

/** Said of a field the DTO has and this file does not describe (tool-schemas.spec.ts fails on it). */
const UNDESCRIBED = 'see this operation in the REST API (GET /docs)';

/** The fields of `dto`, each described by `described` (or, missing there, generically), optional where the DTO's is. */
export function fieldsOf(dto: Type<object>, described: Readonly<Record<string, z.ZodType>>): z.ZodRawShape {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, presence] of dtoFields(dto)) {
    const schema = described[name] ?? z.unknown().describe(UNDESCRIBED);
    shape[name] = presence === 'optional' ? schema.optional() : schema;
  }
  return shape;
}

/** The DTO fields `described` leaves out: none, or the advertised input says little of them. */
export function undescribed(dto: Type<object>, described: Readonly<Record<string, z.ZodType>>): string[] {
  return [...dtoFields(dto).keys()].filter((name) => !(name in described));
}

const ISO_MESSAGE = 'an ISO 8601 date-time with a time zone offset, e.g. 2026-12-01T09:00:00Z or 2026-12-01T10:00:00+01:00';
const isoWithOffset = (what: string) => z.string().regex(ISO_WITH_OFFSET).describe(`${what}: ${ISO_MESSAGE}`);
const uuid = (what: string) => z.uuid().describe(what);
const httpUrl = (what: string) => z.string().max(2048).describe(`${what}: an absolute http(s) URL`);
const mediaIds = z
  .array(z.uuid())
  .max(MAX_IMAGES_PER_POST)
  .describe('image ids from POST /v1/media (each uploaded with its alt text), in the order they are shown');
const text = (what: string) => z.string().min(1).max(10_000).describe(what);

// ---- descriptions, field by field ---------------------------------------------------------

/** PageQuery. */
export const PAGE_FIELDS = {
  limit: z.number().int().min(1).max(MAX_PAGE_SIZE).describe(`items per page, 1 to ${MAX_PAGE_SIZE} (default 50)`),
  cursor: z.string().max(200).describe('the `nextCursor` of the previous page, to read the next one'),
};

/** ListPostsQuery: GET /v1/posts's filters. */
export const LIST_POSTS_FIELDS = {
  ...PAGE_FIELDS,
  status: z.enum(POST_STATUSES).describe('only posts in this status'),
  from: isoWithOffset('only posts scheduled at or after this instant'),
  to: isoWithOffset('only posts scheduled before this instant'),
};

/** TargetDto. */
export const TARGET_FIELDS = {
  accountId: uuid('the account to publish to: an `id` from list_accounts'),
  text: z.string().max(10_000).describe("text for this account only, instead of the post's `text` (its platform's limits apply)"),
  visibility: z.enum(MASTODON_VISIBILITIES).describe("Mastodon accounts only: who sees the status; left out, the account's own default"),
  spoilerText: z.string().min(1).max(MAX_SPOILER_LENGTH).describe('Mastodon accounts only: a content warning shown before the text'),
};

/** ThreadPartDto. */
export const THREAD_PART_FIELDS = {
  text: text('the text of this part'),
  link: httpUrl('a link for this part'),
  media: mediaIds,
};

/** CreatePostDto: POST /v1/posts's body. */
export const CREATE_POST_FIELDS = {
  text: text(
    "the text of the post (platform limits are checked per target: Bluesky 300 graphemes, LinkedIn 3,000 characters, Mastodon its instance's limit)",
  ),
  title: z.string().max(300).describe('a title (blog webhooks use it)'),
  link: httpUrl('a link shown with the post (a link card where the platform makes one)'),
  media: mediaIds,
  thread: z
    .array(z.strictObject(fieldsOf(ThreadPartDto, THREAD_PART_FIELDS)))
    .min(MIN_THREAD_PARTS)
    .max(MAX_THREAD_PARTS)
    .describe(
      `further parts published after the first, in order: ${MIN_THREAD_PARTS} to ${MAX_THREAD_PARTS} (LinkedIn accounts refuse threads)`,
    ),
  targets: z
    .array(z.strictObject(fieldsOf(TargetDto, TARGET_FIELDS)).describe('one account the post goes to'))
    .min(1)
    .max(20)
    .describe('the accounts to publish to, 1 to 20, no account twice'),
  status: z
    .enum(CREATE_STATUSES)
    .describe('`scheduled` (the default) or `draft`: a draft is kept without a time and never published until it is scheduled'),
  scheduledAt: isoWithOffset('when to publish; left out, now (a draft takes none)'),
  // The posting queue's field (advertised where CreatePostDto has it).
  queue: z
    .boolean()
    .describe(
      "true: take the next free slot of the workspace's posting queue as the time, instead of `scheduledAt` (not both); the answer's `queueSlot` says which slot",
    ),
  publishBy: isoWithOffset('a deadline after scheduledAt: no attempt starts after it'),
  metadata: z.record(z.string(), z.unknown()).describe(`any JSON object up to ${MAX_METADATA_BYTES / 1024} KB, passed to blog webhooks`),
};

/** create_post: the body, and the Idempotency-Key header as a field. */
export const CREATE_POST_SHAPE: z.ZodRawShape = {
  ...fieldsOf(CreatePostDto, CREATE_POST_FIELDS),
  idempotencyKey: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe(
      "the REST API's Idempotency-Key: the same key with the same input answers the post made the first time instead of making a second one (kept at least 24 hours); the same key with other input is refused",
    ),
};

/** A post by its id (a path parameter). */
export const POST_ID_SHAPE: z.ZodRawShape = { id: uuid('the post id') };

/** ListDlqQuery: GET /v1/dlq's filters. */
export const LIST_FAILED_FIELDS = {
  ...PAGE_FIELDS,
  accountId: uuid('only the jobs of this account'),
  provider: z.enum(PROVIDERS).describe('only the jobs of accounts of this platform'),
  errorClass: z.enum(ERROR_CLASSES).describe('only jobs whose last attempt failed this way'),
  deadReason: z.enum(DEAD_REASONS).describe('only jobs that died for this reason'),
  from: isoWithOffset('only jobs that died at or after this instant'),
  to: isoWithOffset('only jobs that died before this instant'),
  q: z.string().max(200).describe('case-insensitive text to find in the last error'),
  status: z.enum(['dead', 'discarded']).describe('`dead` (the default) or `discarded` jobs'),
  includeDiscarded: z.boolean().describe('list dead and discarded jobs together'),
};

/** EditThreadPartDto. */
export const EDIT_THREAD_PART_FIELDS = {
  index: z
    .number()
    .int()
    .min(0)
    .max(MAX_THREAD_PARTS - 1)
    .describe("the part's place in `thread` (0 is the post's second part)"),
  text: text('the new text of this part'),
  link: httpUrl('the new link of this part'),
  media: mediaIds,
};

/** EditDeadJobDto: PATCH /v1/dlq/:jobId's body. */
export const EDIT_FAILED_FIELDS = {
  text: text('the new text'),
  title: z.string().max(300).nullable().describe('the new title; null removes it'),
  link: httpUrl('the new link; null removes it').nullable(),
  media: mediaIds,
  metadata: z.record(z.string(), z.unknown()).nullable().describe('the new metadata object; null removes it'),
  thread: z
    .array(z.strictObject(fieldsOf(EditThreadPartDto, EDIT_THREAD_PART_FIELDS)))
    .min(1)
    .max(MAX_THREAD_PARTS)
    .describe("a thread's further parts to change, each by its index; a part already published cannot change"),
};

/** RequeueDto: POST /v1/dlq/:jobId/requeue's body. */
export const REQUEUE_FIELDS = {
  runAt: isoWithOffset('when to try again; left out, now'),
  force: z
    .boolean()
    .describe(
      "requeue even though the job's account needs re-authentication or is disabled: the job then waits until the account is fixed",
    ),
};

/** edit_and_requeue_failed_post: the job, the edit's fields and the requeue's. */
export const EDIT_AND_REQUEUE_SHAPE: z.ZodRawShape = {
  jobId: uuid('the failed job: an `id` from list_failed_posts'),
  ...fieldsOf(EditDeadJobDto, EDIT_FAILED_FIELDS),
  ...fieldsOf(RequeueDto, REQUEUE_FIELDS),
};

/** CalendarWeekInput. */
export const CALENDAR_FIELDS = {
  date: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/)
    .describe('any day of the week to show, YYYY-MM-DD in `timezone` (default: today); weeks start on Monday'),
  timezone: z.string().max(100).describe('an IANA time zone such as Europe/Berlin (default UTC): days and times are in it'),
};

export const LIST_ACCOUNTS_SHAPE = fieldsOf(PageQuery, PAGE_FIELDS);
export const LIST_POSTS_SHAPE = fieldsOf(ListPostsQuery, LIST_POSTS_FIELDS);
export const LIST_FAILED_SHAPE = fieldsOf(ListDlqQuery, LIST_FAILED_FIELDS);
export const CALENDAR_SHAPE = fieldsOf(CalendarWeekInput, CALENDAR_FIELDS);

/**
 * Each tool's input shape by name. A tool (mcp-tools.ts) names its shape instead of holding it,
 * so that zod and this file load with the MCP server at the first request to /mcp, not at startup.
 */
export const TOOL_SHAPES = {
  LIST_ACCOUNTS: LIST_ACCOUNTS_SHAPE,
  LIST_POSTS: LIST_POSTS_SHAPE,
  POST_ID: POST_ID_SHAPE,
  CREATE_POST: CREATE_POST_SHAPE,
  LIST_FAILED: LIST_FAILED_SHAPE,
  EDIT_AND_REQUEUE: EDIT_AND_REQUEUE_SHAPE,
  CALENDAR: CALENDAR_SHAPE,
} satisfies Record<string, z.ZodRawShape>;

export type ToolShape = keyof typeof TOOL_SHAPES;

/**
 * What the tool registers: any object, every field kept for class-validator to judge, with the
 * precise schema of `shape` as its JSON Schema (what tools/list shows a client).
 */
export function advertised(shape: z.ZodRawShape): z.ZodType<Record<string, unknown>> {
  const precise = z.strictObject(shape);
  const json = z.toJSONSchema(precise, { io: 'input', target: 'draft-7' }) as Record<string, unknown>;
  delete json.$schema;
  return z.looseObject({}).meta(json);
}
