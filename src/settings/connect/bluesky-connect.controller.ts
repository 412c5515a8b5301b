import { Body, Controller, Get, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { ConnectService } from '../../accounts/connect/connect.service';
import { Public } from '../../workspaces/auth';
import { personMessage } from '../form-validation';
import { PageExceptionFilter } from '../page-exception.filter';
import { field, isUuid } from '../page-input';
import { PageRenderer } from '../page-renderer';
import { cookie, PageRequest, requirePage } from '../session/page-request';
import { PageSessionGuard } from '../session/page-session.guard';
import { SessionsService } from '../../people/sessions.service';
import { ConnectPages, ConnectPageSpec } from './connect-pages';

const BLUESKY: ConnectPageSpec = {
  label: 'Bluesky',
  cookie: 'herald_bluesky',
  cookiePath: '/settings/bluesky',
  connectedText: (name, postingAs) => `Bluesky account “${name}” connected with OAuth (posting as ${postingAs}).`,
};

/** "Connect with Bluesky" / "Reconnect with Bluesky": start (a form on the page) and the authorization server's redirect back. */
@ApiExcludeController()
@Public()
@UseFilters(PageExceptionFilter)
@Controller('settings/bluesky')
export class BlueskyConnectController {
  constructor(
    private readonly connect: ConnectService,
    private readonly connectPages: ConnectPages,
    private readonly sessions: SessionsService,
    private readonly pages: PageRenderer,
  ) {}

  /**
   * A POST (with the CSRF token), so no other site can start a flow in a person's name. The
   * answer is a page that goes on to the authorization server by itself (and a link to it): the
   * server is whichever one the person's PDS names, so the page's form-action policy cannot list
   * it in advance, and a form's redirects are held to that policy.
   */
  @Post('start')
  @UseGuards(PageSessionGuard)
  async start(@Req() req: PageRequest, @Res() res: Response, @Body() body: Record<string, unknown>): Promise<void> {
    const session = requirePage(req);
    const accountId = field(body, 'accountId');
    const back = accountId ? `/settings/accounts/${accountId}/reconnect` : '/settings/accounts/connect/bluesky';
    try {
      const target =
        accountId !== '' && isUuid(accountId)
          ? { accountId: accountId.toLowerCase() }
          : { name: field(body, 'name'), identifier: field(body, 'identifier') };
      const { url, host, browserToken, ttlMs } = await this.connect.start(session, 'bluesky', target);
      this.connectPages.keepBrowserToken(res, BLUESKY, browserToken, ttlMs);
      await this.pages.render(
        res,
        'bluesky-redirect',
        { title: 'Continue to Bluesky', section: 'accounts', session },
        { url, host, refreshTo: url },
      );
    } catch (err) {
      const known = personMessage(err);
      if (!known) throw err;
      await this.pages.redirect(res, session, back, { tone: 'error', text: known.message });
    }
  }

  /**
   * The authorization server sends the browser here with `code`, `state` and `iss` (or
   * `error`). The session cookie does not come with this cross-site navigation: the state (bound
   * to the session and this browser) says whose flow it is.
   */
  @Get('callback')
  async callback(@Req() req: PageRequest, @Res() res: Response, @Query() query: Record<string, unknown>): Promise<void> {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) if (typeof value === 'string' && value.length <= 4096) params.set(name, value);
    await this.connectPages.callback(res, BLUESKY, () =>
      this.connect.callback('bluesky', params, cookie(req, BLUESKY.cookie), (id) => this.sessions.resolveById(id)),
    );
  }
}
