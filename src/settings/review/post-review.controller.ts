import { Body, Controller, Get, Inject, Param, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { allows } from '../../access/roles';
import { ParseIdPipe } from '../../common/parse-id.pipe';
import { DomainError, ErrorCode } from '../../common/errors';
import { HERALD_CONFIG, HeraldConfig } from '../../config/config';
import type { PageSession } from '../../people/session.types';
import type { PostView } from '../../posts/post.types';
import { PostsService } from '../../posts/posts.service';
import { CommentsService } from '../../review/comments.service';
import { verdictWords } from '../../review/reviewer-decision';
import type { NewShareLinkView } from '../../review/review.types';
import { DEFAULT_EXPIRY_DAYS, MAX_EXPIRY_DAYS, MIN_EXPIRY_DAYS } from '../../review/share-link';
import { ShareLinksService } from '../../review/share-links.service';
import { Public } from '../../workspaces/auth';
import { PageExceptionFilter } from '../page-exception.filter';
import { field, rawField } from '../page-input';
import { PageRenderer } from '../page-renderer';
import { PageRequest, requirePage } from '../session/page-request';
import { PageSessionGuard } from '../session/page-session.guard';

const postId = new ParseIdPipe('post');

/**
 * A post's comments and client review links, beside the post (/settings/posts/:id/review,
 * linked from the posts list, the calendar and the composer): everyone reads them; editors and
 * owners comment, make a link (its address shown once, on the page that made it: it is never
 * kept, so no later page can show it again) and revoke one.
 */
@ApiExcludeController()
@Public()
@UseGuards(PageSessionGuard)
@UseFilters(PageExceptionFilter)
@Controller('settings')
export class PostReviewController {
  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly pages: PageRenderer,
    private readonly posts: PostsService,
    private readonly comments: CommentsService,
    private readonly links: ShareLinksService,
  ) {}

  @Get('posts/:id/review')
  async show(@Req() req: PageRequest, @Res() res: Response, @Param('id', postId) id: string): Promise<void> {
    const session = requirePage(req);
    await this.render(res, session, await this.posts.get(session.auth.workspaceId, id), {});
  }

  @Post('posts/:id/comments')
  async comment(@Req() req: PageRequest, @Res() res: Response, @Param('id', postId) id: string, @Body() body: Record<string, unknown>) {
    const session = requirePage(req);
    const post = await this.posts.get(session.auth.workspaceId, id);
    const text = rawField(body, 'body');
    try {
      await this.comments.add(session.auth, id, text);
    } catch (err) {
      if (err instanceof DomainError && err.code === ErrorCode.InvalidInput) {
        return this.render(res, session, post, { error: err.message.replace(/^body/, 'The comment'), draft: text, status: 400 });
      }
      throw err;
    }
    await this.pages.redirect(res, session, `/settings/posts/${id}/review#comments`, { tone: 'success', text: 'Comment added.' });
  }

  @Post('posts/:id/share-links')
  async makeLink(@Req() req: PageRequest, @Res() res: Response, @Param('id', postId) id: string, @Body() body: Record<string, unknown>) {
    const session = requirePage(req);
    const post = await this.posts.get(session.auth.workspaceId, id);
    const days = Number(field(body, 'days') || DEFAULT_EXPIRY_DAYS);
    if (!Number.isInteger(days) || days < MIN_EXPIRY_DAYS || days > MAX_EXPIRY_DAYS) {
      return this.render(res, session, post, { error: `A link is valid for ${MIN_EXPIRY_DAYS} to ${MAX_EXPIRY_DAYS} days.`, status: 400 });
    }
    const made = await this.links.create(session.auth, id, { expiresInDays: days });
    // Shown on this answer only (no redirect): the address is not kept anywhere to show it again.
    await this.render(res, session, post, { made });
  }

  @Post('share-links/:id/revoke')
  async revoke(
    @Req() req: PageRequest,
    @Res() res: Response,
    @Param('id', new ParseIdPipe('share link')) id: string,
    @Body() body: Record<string, unknown>,
  ) {
    const session = requirePage(req);
    const link = await this.links.revoke(session.auth, id);
    const back = link.postIds.includes(field(body, 'postId').toLowerCase()) ? field(body, 'postId').toLowerCase() : link.postIds[0];
    await this.pages.redirect(res, session, back ? `/settings/posts/${back}/review#links` : '/settings/posts', {
      tone: 'success',
      text: 'The review link is revoked: it opens nothing any more.',
    });
  }

  private async render(
    res: Response,
    session: PageSession,
    post: PostView,
    extra: { error?: string; draft?: string; made?: NewShareLinkView; status?: number },
  ): Promise<void> {
    const ws = session.auth.workspaceId;
    const [comments, links] = await Promise.all([
      this.comments.list(ws, post.id, 200),
      this.links.list(ws, { postId: post.id, limit: 50 }),
    ]);
    await this.pages.render(
      res,
      'post-review',
      { title: 'Comments and review links', section: 'posts', session, status: extra.status ?? (extra.made ? 201 : 200) },
      {
        post: { id: post.id, title: post.title, text: post.text, status: post.status, scheduledAt: post.scheduledAt },
        canEditPost:
          allows(session.auth, 'edit') &&
          (post.status === 'draft' ||
            post.jobs.every((j) => j.attemptCount === 0 && ['scheduled', 'paused', 'cancelled'].includes(j.status))),
        comments: comments.data.map((c) => ({
          ...c,
          reviewer: c.author.kind === 'reviewer',
          verdictWords: verdictWords(c.verdict),
        })),
        links: links.data.map((l) => ({ ...l, active: l.status === 'active', others: l.postIds.length - 1 })),
        made: extra.made ?? null,
        error: extra.error ?? null,
        draft: extra.draft ?? '',
        days: DEFAULT_EXPIRY_DAYS,
        minDays: MIN_EXPIRY_DAYS,
        maxDays: MAX_EXPIRY_DAYS,
        publicUrl: this.config.publicUrl,
      },
    );
  }
}
