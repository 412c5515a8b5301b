import { Controller, Get, Param, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { ParseIdPipe } from '../common/parse-id.pipe';
import type { JobStatus } from '../vocabulary/vocabulary';
import type { PostView } from '../posts/post.types';
import { ListPostsQuery } from '../posts/posts.dto';
import { PostsService } from '../posts/posts.service';
import { Public } from '../workspaces/auth';
import { AccountsPageService, PROVIDER_LABELS } from './accounts-page.service';
import { asDto, personMessage } from './form-validation';
import { PageExceptionFilter } from './page-exception.filter';
import { PageRenderer } from './page-renderer';
import { PageRequest, requirePage } from './session/page-request';
import { PageSessionGuard } from './session/page-session.guard';

/** Words for a job's state on the posts page. */
const JOB_WORDS: Record<JobStatus, string> = {
  scheduled: 'waiting',
  in_progress: 'sending',
  succeeded: 'published',
  paused: 'paused (account needs attention)',
  dead: 'failed',
  cancelled: 'cancelled',
  discarded: 'failed (discarded)',
};

const POST_WORDS: Record<PostView['status'], string> = {
  draft: 'Draft',
  pending_approval: 'Waiting for approval',
  expired: 'Expired: approved after its deadline',
  scheduled: 'Scheduled',
  publishing: 'Publishing',
  published: 'Published',
  partially_failed: 'Partly failed',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

/**
 * Scheduled posts, read-only but for cancelling: upcoming posts and the most recent ones, each
 * with its state per account, so a person sees that what they scheduled is going out.
 */
@ApiExcludeController()
@Public()
@UseGuards(PageSessionGuard)
@UseFilters(PageExceptionFilter)
@Controller('settings/posts')
export class PostsPageController {
  constructor(
    private readonly pages: PageRenderer,
    private readonly posts: PostsService,
    private readonly accounts: AccountsPageService,
  ) {}

  @Get()
  async list(@Req() req: PageRequest, @Res() res: Response): Promise<void> {
    const session = requirePage(req);
    const ws = session.auth.workspaceId;
    const now = new Date().toISOString();
    const [upcoming, recent, accounts] = await Promise.all([
      this.posts.list(ws, await asDto(ListPostsQuery, { from: now, limit: 100 })),
      this.posts.list(ws, await asDto(ListPostsQuery, { to: now, limit: 30 })),
      this.accounts.all(ws),
    ]);
    const names = new Map(accounts.map((a) => [a.id, a.name]));
    const view = (p: PostView) => ({
      id: p.id,
      text: p.text,
      title: p.title,
      scheduledAt: p.scheduledAt,
      status: p.status,
      statusLabel: POST_WORDS[p.status],
      tone:
        p.status === 'failed' || p.status === 'partially_failed'
          ? 'bad'
          : p.status === 'published'
            ? 'ok'
            : p.status === 'cancelled'
              ? 'muted'
              : 'warn',
      cancellable: p.jobs.some((j) => j.status === 'scheduled' || j.status === 'paused'),
      // The composer edits a post none of whose deliveries started (the API's rule).
      editable: p.status === 'scheduled' && p.jobs.some((j) => j.status === 'scheduled' || j.status === 'paused'),
      targets: p.jobs.map((j) => ({
        accountName: names.get(j.accountId) ?? 'removed account',
        providerLabel: PROVIDER_LABELS[j.provider],
        state: JOB_WORDS[j.status],
        status: j.status,
        failedUrl: j.status === 'dead' || j.status === 'discarded' ? `/settings/failed-posts/${j.id}` : null,
        remoteUrl: j.status === 'succeeded' && j.remoteUrl && /^https?:\/\//.test(j.remoteUrl) ? j.remoteUrl : null,
      })),
    });
    // Lists by time hold no drafts (a draft has no time).
    const soonestFirst = [...upcoming.data].sort((a, b) => (a.scheduledAt ?? '').localeCompare(b.scheduledAt ?? ''));
    const latestFirst = [...recent.data].sort((a, b) => (b.scheduledAt ?? '').localeCompare(a.scheduledAt ?? ''));
    await this.pages.render(
      res,
      'posts',
      { title: 'Scheduled posts', section: 'posts', session },
      {
        upcoming: soonestFirst.map(view),
        recent: latestFirst.map(view),
        noUpcoming: upcoming.data.length === 0,
        noRecent: recent.data.length === 0,
      },
    );
  }

  @Post(':id/cancel')
  async cancel(@Req() req: PageRequest, @Res() res: Response, @Param('id', new ParseIdPipe('post')) id: string): Promise<void> {
    const session = requirePage(req);
    try {
      const post = await this.posts.cancel(session.auth, id);
      const cancelled = post.jobs.filter((j) => j.status === 'cancelled').length;
      await this.pages.redirect(res, session, '/settings/posts', {
        tone: 'success',
        text: `Cancelled for ${cancelled} account${cancelled === 1 ? '' : 's'}.${post.jobs.length > cancelled ? ' Deliveries that had already started or finished are not undone.' : ''}`,
      });
    } catch (err) {
      const known = personMessage(err);
      if (!known) throw err;
      await this.pages.redirect(res, session, '/settings/posts', { tone: 'error', text: known.message });
    }
  }
}
