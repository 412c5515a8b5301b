import { Body, Controller, Get, Param, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApprovalsService } from '../approvals/approvals.service';
import { ParseIdPipe } from '../common/parse-id.pipe';
import type { PostView } from '../posts/post.types';
import { Public } from '../workspaces/auth';
import { AccountsPageService, PROVIDER_LABELS } from './accounts-page.service';
import { personMessage } from './form-validation';
import { PageExceptionFilter } from './page-exception.filter';
import { field, rawField } from './page-input';
import { PageRenderer } from './page-renderer';
import { PageRequest, requirePage } from './session/page-request';
import { PageSessionGuard } from './session/page-session.guard';

const postId = new ParseIdPipe('post');

const MODES = [
  { value: 'off', label: 'Off: nobody needs approval' },
  { value: 'editors', label: "Editors: posts made by editors (people or API keys) need an owner's approval" },
  { value: 'everyone', label: 'Everyone: every post needs the approval of an owner other than its author' },
] as const;

/**
 * "Waiting for approval": the posts that wait for an owner's decision, oldest first, with who
 * asked and when; owners approve or reject them here (a rejection needs a comment), and set the
 * workspace's approval mode. Other roles see the list. Every action goes through ApprovalsService,
 * as the API's does (docs/api.md "Approvals").
 */
@ApiExcludeController()
@Public()
@UseGuards(PageSessionGuard)
@UseFilters(PageExceptionFilter)
@Controller('settings/approvals')
export class ApprovalsPageController {
  constructor(
    private readonly pages: PageRenderer,
    private readonly approvals: ApprovalsService,
    private readonly accounts: AccountsPageService,
  ) {}

  @Get()
  async list(@Req() req: PageRequest, @Res() res: Response): Promise<void> {
    await this.show(req, res);
  }

  /** The approval mode (owners). */
  @Post()
  async saveSettings(@Req() req: PageRequest, @Res() res: Response, @Body() body: Record<string, unknown>): Promise<void> {
    const session = requirePage(req);
    const mode = field(body, 'mode');
    if (!MODES.some((m) => m.value === mode)) {
      await this.show(req, res, { error: 'Choose one of the approval modes.', status: 400 });
      return;
    }
    const saved = await this.approvals.updateSettings(session.auth, {
      mode: mode as (typeof MODES)[number]['value'],
      clientApproval: field(body, 'clientApproval') === 'yes',
    });
    await this.pages.redirect(res, session, '/settings/approvals', {
      tone: 'success',
      text: `Saved: approval mode ${saved.mode}${saved.clientApproval ? ', client review links count' : ''}.`,
    });
  }

  @Post(':id/approve')
  async approve(@Req() req: PageRequest, @Res() res: Response, @Param('id', postId) id: string): Promise<void> {
    const session = requirePage(req);
    try {
      const post = await this.approvals.approve(session.auth.workspaceId, id, session.auth);
      await this.pages.redirect(res, session, '/settings/approvals', {
        tone: post.status === 'expired' ? 'error' : 'success',
        text:
          post.status === 'expired'
            ? 'Approved after its deadline: the post expired, nothing was published.'
            : `Approved: scheduled for ${post.jobs.length} account${post.jobs.length === 1 ? '' : 's'}.`,
      });
    } catch (err) {
      await this.refused(res, req, err);
    }
  }

  @Post(':id/reject')
  async reject(
    @Req() req: PageRequest,
    @Res() res: Response,
    @Param('id', postId) id: string,
    @Body() body: Record<string, unknown>,
  ): Promise<void> {
    const session = requirePage(req);
    try {
      await this.approvals.reject(session.auth.workspaceId, id, session.auth, rawField(body, 'comment'));
      await this.pages.redirect(res, session, '/settings/approvals', {
        tone: 'success',
        text: 'Sent back to its author as a draft, with your comment.',
      });
    } catch (err) {
      await this.refused(res, req, err);
    }
  }

  private async refused(res: Response, req: PageRequest, err: unknown): Promise<void> {
    const known = personMessage(err);
    if (!known) throw err;
    await this.pages.redirect(res, requirePage(req), '/settings/approvals', { tone: 'error', text: known.message });
  }

  private async show(req: PageRequest, res: Response, extra: { error?: string; status?: number } = {}): Promise<void> {
    const session = requirePage(req);
    const ws = session.auth.workspaceId;
    const [settings, waiting, accounts] = await Promise.all([
      this.approvals.settings(ws),
      this.approvals.waiting(ws),
      this.accounts.all(ws),
    ]);
    const histories = await Promise.all(waiting.map((p) => this.approvals.history(ws, p.id)));
    const names = new Map(accounts.map((a) => [a.id, { name: a.name, provider: PROVIDER_LABELS[a.provider] }]));
    const view = (p: PostView, i: number) => {
      const asked = [...histories[i]].reverse().find((s) => s.step === 'submitted' || s.step === 'resubmitted');
      return {
        id: p.id,
        text: p.text,
        title: p.title,
        link: p.link,
        scheduledAt: p.scheduledAt,
        publishBy: p.publishBy,
        author: asked?.by.label ?? 'unknown',
        askedAt: asked?.at ?? p.updatedAt,
        resubmitted: asked?.step === 'resubmitted',
        targets: (p.draftTargets ?? []).map((t) => names.get(t.accountId) ?? { name: 'removed account', provider: '' }),
      };
    };
    await this.pages.render(
      res,
      'approvals',
      { title: 'Waiting for approval', section: 'approvals', session, status: extra.status ?? 200 },
      {
        waiting: waiting.map(view),
        noneWaiting: waiting.length === 0,
        modes: MODES.map((m) => ({ ...m, selected: m.value === settings.mode })),
        approvalSettings: settings,
        error: extra.error,
      },
    );
  }
}
