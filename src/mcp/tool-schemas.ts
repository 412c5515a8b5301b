import * as z from 'zod';
import { MAX_PAGE_SIZE } from '../common/pagination';
import { DEAD_REASONS } from '../dead-letter/dead-letter.dto';
import { MAX_IMAGES_PER_POST } from '../posts/platform-rules';
import {
  CREATE_STATUSES,
  ISO_WITH_OFFSET,
  MAX_METADATA_BYTES,
  MAX_SPOILER_LENGTH,
  MAX_THREAD_PARTS,
  MIN_THREAD_PARTS,
  POST_STATUSES,
} from '../posts/posts.dto';
import { ERROR_CLASSES, MASTODON_VISIBILITIES, PROVIDERS } from '../vocabulary/vocabulary';

/**
 * The input schemas the MCP tools advertise (tools/list), written in zod as the SDK takes them,
 * field for field the REST contract's DTOs (src/posts/posts.dto.ts, src/dead-letter/dead-letter.dto.ts,
 * src/common/pagination.ts): the same names, types, limits and descriptions a person reads in the
 * OpenAPI document. tool-schemas.spec.ts holds each one to its DTO's fields.
 *
 * They describe; they do not decide. The SDK parses a call's arguments with the registered
 * schema before the tool runs, and a refusal there would carry zod's wording, not the API's. So
 * what is registered is `advertised(shape)`: a schema that takes any object and keeps every field,
 * carrying the precise one as its JSON Schema (zod merges a schema's metadata into the JSON Schema
 * it writes). The tool then validates with class-validator on the DTO classes through the API's
 * own ValidationPipe (tool-input.ts), so a bad field gets the REST 400's message, word for word.
 */

const ISO_MESSAGE = 'an ISO 8601 date-time with a time zone offset, e.g. 2026-12-01T09:00:00Z or 2026-12-01T10:00:00+01:00';
const isoWithOffset = (what: string) => z.string().regex(ISO_WITH_OFFSET).describe(`${what}: ${ISO_MESSAGE}`);
const uuid = (what: string) => z.uuid().describe(what);
const httpUrl = (what: string) => z.string().max(2048).describe(`${what}: an absolute http(s) URL`);
const mediaIds = z
  .array(z.uuid())
  .max(MAX_IMAGES_PER_POST)
  .describe('image ids from POST /v1/media (each uploaded with its alt text), in the order they are shown');

/** The page of a list: limit and cursor (PageQuery). */
export const PAGE_SHAPE = {
  limit: z.number().int().min(1).max(MAX_PAGE_SIZE).optional().describe(`items per page, 1 to ${MAX_PAGE_SIZE} (default 50)`),
  cursor: z.string().max(200).optional().describe('the `nextCursor` of the previous page, to read the next one'),
};

/** GET /v1/posts's filters (ListPostsQuery). */
export const LIST_POSTS_SHAPE = {
  ...PAGE_SHAPE,
  status: z.enum(POST_STATUSES).optional().describe("only posts in this status (derived from the post's jobs)"),
  from: isoWithOffset('only posts scheduled at or after this instant').optional(),
  to: isoWithOffset('only posts scheduled before this instant').optional(),
};

export const TARGET = z
  .strictObject({
    accountId: uuid('the account to publish to: an `id` from list_accounts'),
    text: z
      .string()
      .max(10_000)
      .optional()
      .describe("text for this account only, instead of the post's `text` (its platform's limits apply)"),
    visibility: z
      .enum(MASTODON_VISIBILITIES)
      .optional()
      .describe("Mastodon accounts only: who sees the status; left out, the account's own default"),
    spoilerText: z
      .string()
      .min(1)
      .max(MAX_SPOILER_LENGTH)
      .optional()
      .describe('Mastodon accounts only: a content warning shown before the text'),
  })
  .describe('one account the post goes to');

export const THREAD_PART = z.strictObject({
  text: z.string().min(1).max(10_000).describe('the text of this part'),
  link: httpUrl('a link for this part').optional(),
  media: mediaIds.optional(),
});

/** POST /v1/posts (CreatePostDto), and the Idempotency-Key header as a field. */
export const CREATE_POST_SHAPE = {
  text: z
    .string()
    .min(1)
    .max(10_000)
    .describe(
      'the text of the post (platform limits are checked per target: Bluesky 300 graphemes, LinkedIn 3,000 characters, Mastodon its instance’s limit)',
    ),
  title: z.string().max(300).optional().describe('a title (blog webhooks use it)'),
  link: httpUrl('a link shown with the post (a link card where the platform makes one)').optional(),
  media: mediaIds.optional(),
  thread: z
    .array(THREAD_PART)
    .min(MIN_THREAD_PARTS)
    .max(MAX_THREAD_PARTS)
    .optional()
    .describe(
      `further parts published after the first, in order: ${MIN_THREAD_PARTS} to ${MAX_THREAD_PARTS} (LinkedIn accounts refuse threads)`,
    ),
  targets: z.array(TARGET).min(1).max(20).describe('the accounts to publish to, 1 to 20, no account twice'),
  status: z
    .enum(CREATE_STATUSES)
    .optional()
    .describe('`scheduled` (the default) or `draft`: a draft is kept without a time and never published until it is scheduled'),
  scheduledAt: isoWithOffset('when to publish; left out, now (a draft takes none)').optional(),
  publishBy: isoWithOffset('a deadline after scheduledAt: no attempt starts after it').optional(),
  metadata: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(`any JSON object up to ${MAX_METADATA_BYTES / 1024} KB, passed to blog webhooks`),
  idempotencyKey: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe(
      "the REST API's Idempotency-Key: the same key with the same input answers the post made the first time instead of making a second one (kept at least 24 hours); the same key with other input is refused",
    ),
};

/** A post or a job by its id. */
export const POST_ID_SHAPE = { id: uuid('the post id') };

/** GET /v1/dlq's filters (ListDlqQuery). */
export const LIST_FAILED_SHAPE = {
  ...PAGE_SHAPE,
  accountId: uuid('only the jobs of this account').optional(),
  provider: z.enum(PROVIDERS).optional().describe('only the jobs of accounts of this platform'),
  errorClass: z.enum(ERROR_CLASSES).optional().describe('only jobs whose last attempt failed this way'),
  deadReason: z.enum(DEAD_REASONS).optional().describe('only jobs that died for this reason'),
  from: isoWithOffset('only jobs that died at or after this instant').optional(),
  to: isoWithOffset('only jobs that died before this instant').optional(),
  q: z.string().max(200).optional().describe('case-insensitive text to find in the last error'),
  status: z.enum(['dead', 'discarded']).optional().describe('`dead` (the default) or `discarded` jobs'),
  includeDiscarded: z.boolean().optional().describe('list dead and discarded jobs together'),
};

export const EDIT_THREAD_PART = z.strictObject({
  index: z
    .number()
    .int()
    .min(0)
    .max(MAX_THREAD_PARTS - 1)
    .describe("the part's place in `thread` (0 is the post's second part)"),
  text: z.string().min(1).max(10_000).optional(),
  link: httpUrl('a link for this part').optional(),
  media: mediaIds.optional(),
});

/** PATCH /v1/dlq/:jobId's fields (EditDeadJobDto). */
export const EDIT_FAILED_FIELDS = {
  text: z.string().min(1).max(10_000).optional().describe('the new text'),
  title: z.string().max(300).nullable().optional().describe('the new title; null removes it'),
  link: httpUrl('the new link; null removes it').nullable().optional(),
  media: mediaIds.optional(),
  metadata: z.record(z.string(), z.unknown()).nullable().optional().describe('the new metadata object; null removes it'),
  thread: z
    .array(EDIT_THREAD_PART)
    .min(1)
    .max(MAX_THREAD_PARTS)
    .optional()
    .describe("a thread's further parts to change, each by its index; a part already published cannot change"),
};

/** POST /v1/dlq/:jobId/requeue's fields (RequeueDto). */
export const REQUEUE_FIELDS = {
  runAt: isoWithOffset('when to try again; left out, now').optional(),
  force: z
    .boolean()
    .optional()
    .describe(
      "requeue even though the job's account needs re-authentication or is disabled: the job then waits until the account is fixed",
    ),
};

export const EDIT_AND_REQUEUE_SHAPE = {
  jobId: uuid('the failed job: a `jobId` from list_failed_posts'),
  ...EDIT_FAILED_FIELDS,
  ...REQUEUE_FIELDS,
};

/** The calendar's week (CalendarWeekInput). */
export const CALENDAR_SHAPE = {
  date: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/)
    .optional()
    .describe('any day of the week to show, YYYY-MM-DD in `timezone` (default: today); weeks start on Monday'),
  timezone: z.string().max(100).optional().describe('an IANA time zone such as Europe/Berlin (default UTC): days and times are in it'),
};

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
