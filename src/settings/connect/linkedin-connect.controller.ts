import { Body, Controller, Get, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { ConnectService } from '../../accounts/connect/connect.service';
import { Public } from '../../workspaces/auth';
import { personMessage } from '../form-validation';
import { PageExceptionFilter } from '../page-exception.filter';
import { field, isUuid } from '../page-input';
import { PageRenderer } from '../page-renderer';
import { cookie, OAUTH_COOKIE, PageRequest, requirePage } from '../session/page-request';
import { PageSessionGuard } from '../session/page-session.guard';
import { SessionsService } from '../../people/sessions.service';
import { ConnectPages, ConnectPageSpec } from './connect-pages';

const LINKEDIN: ConnectPageSpec = {
  label: 'LinkedIn',
  cookie: OAUTH_COOKIE,
  cookiePath: '/settings/linkedin',
  connectedText: (name, postingAs) => `LinkedIn account “${name}” connected (posting as ${postingAs}).`,
};

/** "Connect with LinkedIn": start (a form on the page) and LinkedIn's redirect back. */
@ApiExcludeController()
@Public()
@UseFilters(PageExceptionFilter)
@Controller('settings/linkedin')
export class LinkedInConnectController {
  constructor(
    private readonly connect: ConnectService,
    private readonly connectPages: ConnectPages,
    private readonly sessions: SessionsService,
    private readonly pages: PageRenderer,
  ) {}

  /** A POST (with the CSRF token), so no other site can start a flow in a person's name. */
  @Post('start')
  @UseGuards(PageSessionGuard)
  async start(@Req() req: PageRequest, @Res() res: Response, @Body() body: Record<string, unknown>): Promise<void> {
    const session = requirePage(req);
    const accountId = field(body, 'accountId');
    const back = accountId ? `/settings/accounts/${accountId}/reconnect` : '/settings/accounts/connect/linkedin';
    try {
      const target = accountId !== '' && isUuid(accountId) ? { accountId: accountId.toLowerCase() } : { name: field(body, 'name') };
      const { url, browserToken, ttlMs } = await this.connect.start(session, 'linkedin', target);
      this.connectPages.keepBrowserToken(res, LINKEDIN, browserToken, ttlMs);
      res.redirect(303, url);
    } catch (err) {
      const known = personMessage(err);
      if (!known) throw err;
      await this.pages.redirect(res, session, back, { tone: 'error', text: known.message });
    }
  }

  /**
   * LinkedIn sends the browser here with `code` and `state` (or `error`). The session cookie
   * does not come with this cross-site navigation, so the state (bound to the session and this
   * browser) says whose flow it is.
   */
  @Get('callback')
  async callback(@Req() req: PageRequest, @Res() res: Response, @Query() query: Record<string, unknown>): Promise<void> {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) if (typeof value === 'string') params.set(name, value);
    await this.connectPages.callback(res, LINKEDIN, () =>
      this.connect.callback('linkedin', params, cookie(req, OAUTH_COOKIE), (id) => this.sessions.resolveById(id)),
    );
  }
}
