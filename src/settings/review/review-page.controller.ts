import { Body, Controller, Get, Inject, Param, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { HERALD_CONFIG, HeraldConfig } from '../../config/config';
import { MediaService } from '../../media/media.service';
import type { MediaInfo } from '../../media/media.types';
import type { PostView } from '../../posts/post.types';
import { isReviewerAction, verdictWords } from '../../review/reviewer-decision';
import { ReviewService, ReviewSet } from '../../review/review.service';
import { Public } from '../../workspaces/auth';
import { AccountsPageService } from '../accounts-page.service';
import { field, rawField } from '../page-input';
import { PageRenderer } from '../page-renderer';
import { CsrfRefused } from '../session/page-errors';
import type { PageRequest } from '../session/page-request';
import { checkFormToken, issueFormToken } from '../session/public-form';
import { LINK_NOT_VALID, ReviewExceptionFilter } from './review-exception.filter';
import { reviewTargets } from './review-previews';
import { ReviewRateLimit } from './review-rate-limit';

/** The form's double-submit cookie is scoped to the review pages. */
const FORM_PATH = '/review';
/** The name a reviewer gave, kept in their browser for the next form (never sent to the team but with an answer). */
const NAME_COOKIE = 'herald_reviewer';

const STATUS_WORDS: Record<string, { label: string; tone: string }> = {
  draft: { label: 'Draft', tone: 'muted' },
  pending_approval: { label: 'Waiting for approval', tone: 'warn' },
  scheduled: { label: 'Scheduled', tone: 'warn' },
  publishing: { label: 'Being published', tone: 'warn' },
  published: { label: 'Published', tone: 'ok' },
  partially_failed: { label: 'Partly published', tone: 'bad' },
  failed: { label: 'Not published', tone: 'bad' },
  cancelled: { label: 'Cancelled', tone: 'muted' },
};

/** What the page says after an answer, by what it did (review.service.ts). */
const ANSWERED: Record<string, string> = {
  approved: 'Thank you: you approved the post. It goes out at its planned time.',
  rejected: 'Thank you: the post goes back to the team with your comment.',
  advice: 'Thank you: your answer was sent to the team.',
  stale: 'Thank you: your answer was sent to the team as a comment. The post had changed in the meantime, so it decided nothing.',
};

/** A reviewer's form as it came back with a problem: shown again with what they typed. */
interface Redo {
  postId: string;
  name: string;
  comment: string;
  error: string;
}

/**
 * The client review page at /review/:token: no login, the link's token is the only proof. It
 * shows the link's posts, each target as its platform gets it (the composer's preview), and a
 * form per post to approve, ask for changes or comment, under a name. It shows nothing else of
 * the workspace (no account names, no other posts, no link into /settings), answers every
 * unusable token with the same 404, is rate-limited (review-rate-limit.ts), and its forms carry
 * the double-submit CSRF token of the page's other session-less forms (public-form.ts). The
 * token is kept out of the logs (src/common/logging.ts writes /review/[redacted]).
 */
@ApiExcludeController()
@Public()
@UseFilters(ReviewExceptionFilter)
@Controller('review')
export class ReviewPageController {
  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly review: ReviewService,
    private readonly accounts: AccountsPageService,
    private readonly media: MediaService,
    private readonly pages: PageRenderer,
    private readonly limits: ReviewRateLimit,
  ) {}

  @Get(':token')
  async show(@Req() req: PageRequest, @Res() res: Response, @Param('token') token: string, @Query() query: Record<string, unknown>) {
    if (!(await this.allowed(req, res))) return;
    const set = await this.review.open(token);
    if (!set) return this.gone(res);
    const answered = { postId: field(query, 'answered').toLowerCase(), result: field(query, 'result') };
    await this.render(res, token, set, { answered, name: cookieName(req) }, null, 200);
  }

  @Post(':token')
  async answer(@Req() req: PageRequest, @Res() res: Response, @Param('token') token: string, @Body() body: Record<string, unknown>) {
    if (!(await this.allowed(req, res))) return;
    try {
      checkFormToken(req, body, this.config);
    } catch (err) {
      if (!(err instanceof CsrfRefused)) throw err;
      return this.problem(
        res,
        403,
        'Not sent',
        'This form expired or did not come from this page. Nothing was sent: open the link again and answer from there.',
      );
    }
    const set = await this.review.open(token);
    if (!set) return this.gone(res);
    const limited = await this.limits.answer(clientOf(req), set.link.id);
    if (!limited.ok) return this.tooMany(res, limited.retryAfterSeconds);
    const postId = field(body, 'postId').toLowerCase();
    const action = field(body, 'action');
    const name = rawField(body, 'name').slice(0, 1000);
    const comment = rawField(body, 'comment').slice(0, 10_000);
    if (!isReviewerAction(action)) {
      return this.render(
        res,
        token,
        set,
        { answered: null, name },
        { postId, name, comment, error: 'Choose Approve, Ask for changes or Comment only.' },
        400,
      );
    }
    const outcome = await this.review.answer(token, postId, { action, name, comment });
    if (outcome.kind === 'gone') return this.gone(res);
    if (outcome.kind === 'invalid')
      return this.render(res, token, set, { answered: null, name }, { postId, name, comment, error: outcome.message }, 400);
    res.cookie(NAME_COOKIE, outcome.comment.author.name, {
      httpOnly: true,
      sameSite: 'strict',
      secure: new URL(this.config.publicUrl).protocol === 'https:',
      path: FORM_PATH,
      maxAge: 30 * 86_400_000,
    });
    const result = outcome.notTaken ? 'stale' : outcome.decided === 'none' ? 'advice' : outcome.decided;
    // Post/redirect/get: a reload does not send the answer twice.
    res.redirect(303, `/review/${token}?answered=${postId}&result=${result}#post-${postId}`);
  }

  private async render(
    res: Response,
    token: string,
    set: ReviewSet,
    state: { answered: { postId: string; result: string } | null; name: string },
    redo: Redo | null,
    status: number,
  ): Promise<void> {
    const ws = set.link.workspaceId;
    const [accounts, clientApproval] = await Promise.all([this.accounts.all(ws), this.review.clientApproval(set.link)]);
    const posts = [];
    for (const [index, post] of set.posts.entries()) {
      const media = await this.mediaOf(ws, post);
      const comments = (await this.review.commentsOn(set.link, post.id)).map((c) => ({ ...c, verdictWords: verdictWords(c.verdict) }));
      const mine = redo?.postId === post.id ? redo : null;
      const words = STATUS_WORDS[post.status] ?? { label: post.status, tone: 'muted' };
      posts.push({
        id: post.id,
        heading: post.title ?? (set.posts.length === 1 ? 'The post' : `Post ${index + 1}`),
        scheduledAt: post.scheduledAt,
        statusLabel: words.label,
        tone: words.tone,
        link: post.link,
        targets: reviewTargets(post, accounts, media),
        media: media.map((m) => ({ url: m.url, alt: m.alt })),
        comments,
        answered: state.answered?.postId === post.id ? (ANSWERED[state.answered.result] ?? ANSWERED.advice) : null,
        decides: clientApproval && post.status === 'pending_approval',
        error: mine?.error ?? null,
        nameValue: mine ? mine.name : state.name,
        commentValue: mine?.comment ?? '',
      });
    }
    await this.pages.render(
      res,
      'review',
      { title: 'Review', section: null, session: null, status },
      {
        layout: 'review-layout',
        heading: set.posts.length === 1 ? 'A post to review' : `${set.posts.length} posts to review`,
        many: set.posts.length > 1,
        expiresAt: set.link.expiresAt.toISOString(),
        clientApproval,
        posts,
        formAction: `/review/${token}`,
        formToken: issueFormToken(res, this.config, FORM_PATH),
      },
    );
  }

  private async mediaOf(ws: string, post: PostView): Promise<(MediaInfo & { url: string })[]> {
    const out: (MediaInfo & { url: string })[] = [];
    for (const id of post.media) {
      try {
        const [info] = await this.media.requireMany(ws, [id]);
        out.push({ ...info, url: (await this.media.get(ws, id)).url });
      } catch {
        // An image removed since is not shown.
      }
    }
    return out;
  }

  private async allowed(req: PageRequest, res: Response): Promise<boolean> {
    const limited = await this.limits.request(clientOf(req));
    if (limited.ok) return true;
    await this.tooMany(res, limited.retryAfterSeconds);
    return false;
  }

  private tooMany(res: Response, seconds: number): Promise<void> {
    res.setHeader('Retry-After', String(seconds));
    return this.problem(
      res,
      429,
      'Too many requests',
      `Too many requests from your address: wait ${seconds} second${seconds === 1 ? '' : 's'}, then open the link again.`,
    );
  }

  private gone(res: Response): Promise<void> {
    return this.problem(res, 404, 'Link not valid', LINK_NOT_VALID);
  }

  private problem(res: Response, status: number, heading: string, message: string): Promise<void> {
    return this.pages.render(
      res,
      'review-problem',
      { title: heading, section: null, session: null, status },
      { layout: 'review-layout', heading, message },
    );
  }
}

function clientOf(req: PageRequest): string {
  return (req.ip ?? req.socket.remoteAddress ?? 'unknown').slice(0, 100);
}

function cookieName(req: PageRequest): string {
  const cookies = (req as { cookies?: Record<string, unknown> }).cookies;
  const name = cookies?.[NAME_COOKIE];
  return typeof name === 'string' ? name.slice(0, 80) : '';
}
