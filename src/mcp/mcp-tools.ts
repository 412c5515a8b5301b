import { Injectable, Logger } from '@nestjs/common';
import type { AuthContext } from '../access/auth-context';
import { ROUTE_PERMISSIONS, RouteKey } from '../access/route-permissions';
import { allows, roleRefusal } from '../access/roles';
import { AccountsService } from '../accounts/accounts.service';
import { ApprovalsService } from '../approvals/approvals.service';
import { forbidden, invalidInput } from '../common/errors';
import { toErrorBody, type ErrorBody } from '../common/http-exception.filter';
import { PageQuery } from '../common/pagination';
import { EditDeadJobDto, ListDlqQuery, RequeueDto } from '../dead-letter/dead-letter.dto';
import { DeadLetterService } from '../dead-letter/dead-letter.service';
import { CreatePostDto, ListPostsQuery } from '../posts/posts.dto';
import { PostsService } from '../posts/posts.service';
import { CalendarWeekService } from './calendar-week';
import { CalendarWeekInput } from './calendar-week.dto';
import { asBody, asQuery, noOtherFields, pathId, take } from './tool-input';
import { dtoFields } from './dto-fields';
import type { ToolShape } from './tool-schemas';

/** What a tool answers: its value (shown as JSON text and as structured content), or a refusal. */
export type ToolOutcome = { ok: true; value: Record<string, unknown>; note?: string } | { ok: false; error: ErrorBody; note?: string };

export interface ToolSpec {
  name: string;
  title: string;
  /** What a model reads to choose the tool and fill its input. */
  description: string;
  /**
   * The REST routes the tool stands for: it runs only for a key whose role every one of them
   * allows in the route table (src/access/route-permissions.ts), as the API's guard decides.
   */
  routes: readonly RouteKey[];
  /** Its input's shape in tool-schemas.ts (TOOL_SHAPES), which loads with the MCP server. */
  shape: ToolShape;
  readOnly: boolean;
  run(auth: AuthContext, args: Record<string, unknown>): Promise<Omit<Extract<ToolOutcome, { ok: true }>, 'ok'>>;
}

const PAGED = 'Paged: when `nextCursor` is not null, call again with it as `cursor` for the next page.';

/**
 * Herald's MCP tools, each one a REST route's twin: the same service method the controller
 * calls, its input checked by the same DTO class through the same validation pipe
 * (tool-input.ts), held to the same row of the role table, and refused with the same message
 * (toErrorBody: the exception filter's own mapping). A tool adds nothing the route does not do.
 */
@Injectable()
export class McpTools {
  private readonly logger = new Logger('McpTools');
  readonly tools: readonly ToolSpec[];

  constructor(
    private readonly accounts: AccountsService,
    private readonly posts: PostsService,
    private readonly dlq: DeadLetterService,
    private readonly approvals: ApprovalsService,
    private readonly calendar: CalendarWeekService,
  ) {
    this.tools = this.define();
  }

  /** Runs `tool` for `auth`: the role check, then the tool; any refusal becomes the REST error body. */
  async call(tool: ToolSpec, auth: AuthContext, args: Record<string, unknown>): Promise<ToolOutcome> {
    for (const route of tool.routes) {
      const permission = ROUTE_PERMISSIONS[route];
      if (!allows(auth, permission)) return { ok: false, error: toErrorBody(forbidden(roleRefusal(permission, auth.role))) };
    }
    try {
      return { ok: true, ...(await tool.run(auth, args)) };
    } catch (err) {
      // A 500's cause goes to the log (toErrorBody logs it); the answer says only "Internal server error".
      if (err instanceof AfterPartOfTheWork) return { ok: false, error: toErrorBody(err.refusal, this.logger), note: err.note };
      return { ok: false, error: toErrorBody(err, this.logger) };
    }
  }

  private define(): ToolSpec[] {
    return [
      {
        name: 'list_accounts',
        title: 'List connected accounts',
        description: `The workspace's connected accounts (Bluesky, LinkedIn, Mastodon, blog webhooks), newest first: each one's \`id\` (the \`accountId\` of create_post's targets), provider, name, and health: status (active, needs_reauth, disabled), circuit breaker, last error, last success. Credentials are never shown. ${PAGED} Same as GET /v1/accounts.`,
        routes: ['GET /v1/accounts'],
        shape: 'LIST_ACCOUNTS',
        readOnly: true,
        run: async (auth, args) => {
          const query = await asQuery(PageQuery, args);
          return { value: { ...(await this.accounts.list(auth.workspaceId, query.limit, query.cursor)) } };
        },
      },
      {
        name: 'list_posts',
        title: 'List posts',
        description: `Posts, newest first, each with its jobs (one per account). Filter by \`status\` (draft, scheduled, publishing, published, partially_failed, failed, cancelled) and by scheduled time (\`from\` inclusive, \`to\` exclusive, ISO 8601 with an offset). ${PAGED} Same as GET /v1/posts.`,
        routes: ['GET /v1/posts'],
        shape: 'LIST_POSTS',
        readOnly: true,
        run: async (auth, args) => ({ value: { ...(await this.posts.list(auth.workspaceId, await asQuery(ListPostsQuery, args))) } }),
      },
      {
        name: 'get_post',
        title: 'Get a post',
        description:
          'One post by its id, with its status (derived from its jobs) and each job: the account, its status, attempts, last error, and the published URL once delivered. Same as GET /v1/posts/{id}.',
        routes: ['GET /v1/posts/:id'],
        shape: 'POST_ID',
        readOnly: true,
        run: async (auth, args) => {
          noOtherFields(args, ['id']);
          return { value: { ...(await this.posts.get(auth.workspaceId, pathId(args, 'id', 'post'))) } };
        },
      },
      {
        name: 'create_post',
        title: 'Create a post',
        description:
          'Publish a post to 1 to 20 connected accounts (targets from list_accounts): now (the default), at `scheduledAt`, or keep it as a draft (`status: "draft"`, no time). Platform limits are checked here, per target, and a refusal names the field and target. The answer is the post with one job per account; get_post follows its delivery. Where the workspace requires approval of this key\'s posts, the post answers with status `pending_approval` and no jobs instead: it is published once an owner approves it (and a draft can be sent for approval with submit_for_approval). Give an `idempotencyKey` to make a retry of this call safe: the same key with the same input answers the first post instead of making a second. Same as POST /v1/posts.',
        routes: ['POST /v1/posts'],
        shape: 'CREATE_POST',
        readOnly: false,
        run: async (auth, args) => {
          const [{ idempotencyKey: key }, body] = take(args, ['idempotencyKey']);
          if (key !== undefined && typeof key !== 'string') throw invalidInput('idempotencyKey must be a string of 1 to 255 characters');
          const dto = await asBody(CreatePostDto, body);
          const result = await this.posts.create(auth, dto, body, key);
          return {
            value: { ...(result.body as Record<string, unknown>) },
            note: result.replayed
              ? 'This idempotencyKey was used before with the same input: this is the post made then, not a new one.'
              : undefined,
          };
        },
      },
      {
        name: 'submit_for_approval',
        title: 'Submit a draft for approval',
        description:
          'Send a draft (a post made with create_post and `status: "draft"`) to the workspace\'s owners for approval: it becomes `pending_approval`, checked as scheduling it would be (accounts, platform limits), and publishes nothing until an owner approves it; approved, it goes out at once (a draft has no time), unless its deadline has passed. Where the workspace does not require approval of this key\'s posts, the call is refused (409) rather than publishing anything: schedule the draft instead. Same as POST /v1/posts/{id}/submit.',
        routes: ['POST /v1/posts/:id/submit'],
        shape: 'POST_ID',
        readOnly: false,
        run: async (auth, args) => {
          noOtherFields(args, ['id']);
          return { value: { ...(await this.approvals.submit(auth, pathId(args, 'id', 'post'))) } };
        },
      },
      {
        name: 'list_failed_posts',
        title: 'List failed posts',
        description: `The dead-letter queue: jobs that will not be retried on their own (a post to one account that failed for good), newest death first, each with its post, account, error class, last error and why it died (max_attempts, permanent, poison, expired). Filter by accountId, provider, errorClass, deadReason, time of death (from/to) or text in the last error (q). Fix one with edit_and_requeue_failed_post (its \`jobId\` is the entry's \`id\`). ${PAGED} Same as GET /v1/dlq.`,
        routes: ['GET /v1/dlq'],
        shape: 'LIST_FAILED',
        readOnly: true,
        run: async (auth, args) => ({ value: { ...(await this.dlq.list(auth.workspaceId, await asQuery(ListDlqQuery, args))) } }),
      },
      {
        name: 'edit_and_requeue_failed_post',
        title: 'Edit and requeue a failed post',
        description:
          "Send a failed job (from list_failed_posts) again, with a fresh attempt budget: first its payload is edited with the fields given (text, title, link, media, metadata, thread parts; null clears title, link or metadata; validated as create_post is, for the job's platform), then it is requeued, now or at `runAt`. Without fields to change it is only requeued. An edited job gets a new idempotency key. Only this job changes, not the post's other jobs. If the account needs re-authentication or is disabled, the requeue is refused unless `force: true` (the job then waits until the account is fixed); the edit is kept. Same as PATCH /v1/dlq/{jobId} then POST /v1/dlq/{jobId}/requeue.",
        routes: ['PATCH /v1/dlq/:jobId', 'POST /v1/dlq/:jobId/requeue'],
        shape: 'EDIT_AND_REQUEUE',
        readOnly: false,
        run: async (auth, args) => {
          const [ids, fields] = take(args, ['jobId']);
          const [requeueFields, editFields] = take(fields, [...dtoFields(RequeueDto).keys()]);
          const jobId = pathId(ids, 'jobId', 'job');
          // Both inputs are checked before anything changes: a bad runAt refuses the edit too.
          const edit = await asBody(EditDeadJobDto, editFields);
          const requeue = await asBody(RequeueDto, requeueFields);
          const edited = Object.keys(editFields).length > 0;
          if (edited) await this.dlq.edit(auth, jobId, edit);
          try {
            return { value: { ...(await this.dlq.requeue(auth, jobId, requeue)) } };
          } catch (err) {
            if (!edited) throw err;
            throw new AfterPartOfTheWork(err, 'The edit was saved: the job stays in the failed posts with its new payload.');
          }
        },
      },
      {
        name: 'get_calendar',
        title: 'Get the calendar of a week',
        description:
          "What the settings page's calendar shows, as data: the posts of one week (Monday to Sunday) day by day, each at its time in `timezone`, with its status and its accounts' jobs, plus the drafts (which have no day until scheduled). `previous` and `next` are days of the weeks around it, for the next call's `date`.",
        routes: ['GET /v1/posts'],
        shape: 'CALENDAR',
        readOnly: true,
        run: async (auth, args) => ({
          value: { ...(await this.calendar.week(auth.workspaceId, await asQuery(CalendarWeekInput, args), new Date())) },
        }),
      },
    ];
  }
}

/** A refusal that comes after part of a tool's work was done: the REST error, and what was kept. */
class AfterPartOfTheWork extends Error {
  constructor(
    readonly refusal: unknown,
    readonly note: string,
  ) {
    super(note);
  }
}
