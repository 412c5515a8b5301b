import { Body, Controller, Get, Inject, Logger, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { FLOW_TTL_MS } from '../../connectors/bluesky/oauth/bluesky-oauth-stores';
import { HERALD_CONFIG, HeraldConfig } from '../../config/config';
import { Public } from '../../workspaces/auth';
import { personMessage } from '../form-validation';
import { PageExceptionFilter } from '../page-exception.filter';
import { field, isUuid } from '../page-input';
import { PageRenderer } from '../page-renderer';
import { cookie, isHttps, PageRequest, requirePage } from '../session/page-request';
import { PageSessionGuard } from '../session/page-session.guard';
import { BlueskyCallbackOutcome, BlueskyConnectService } from './bluesky-connect.service';

const COOKIE = 'herald_bluesky';
const COOKIE_PATH = '/settings/bluesky';

/** "Connect with Bluesky" / "Reconnect with Bluesky": start (a form on the page) and the authorization server's redirect back. */
@ApiExcludeController()
@Public()
@UseFilters(PageExceptionFilter)
@Controller('settings/bluesky')
export class BlueskyConnectController {
  private readonly logger = new Logger('BlueskyConnect');

  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly connect: BlueskyConnectService,
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
      const { url, host, browserToken } = await this.connect.start(session, target);
      // SameSite=Lax: the redirect back is a cross-site top-level GET, which carries Lax cookies
      // but not the Strict session cookie.
      res.cookie(COOKIE, browserToken, {
        httpOnly: true,
        secure: isHttps(this.config, res.req),
        sameSite: 'lax',
        path: COOKIE_PATH,
        maxAge: FLOW_TTL_MS,
      });
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
   * to the session and this browser) says whose flow it is, and the answer is a page of its own
   * that goes on to the accounts page with a same-site navigation.
   */
  @Get('callback')
  async callback(@Req() req: PageRequest, @Res() res: Response, @Query() query: Record<string, unknown>): Promise<void> {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) if (typeof value === 'string' && value.length <= 4096) params.set(name, value);
    let outcome: BlueskyCallbackOutcome;
    try {
      outcome = await this.connect.callback(params, cookie(req, COOKIE));
    } catch (err) {
      const known = personMessage(err);
      if (!known) throw err;
      outcome = { ok: false, status: known.status, message: `${known.message}. Nothing was changed.`, session: null, stateUsed: true };
    }
    // Only a matching state uses the browser's cookie up: a forged link must not spoil the
    // person's own flow in progress.
    if (outcome.stateUsed) res.clearCookie(COOKIE, { path: COOKIE_PATH });
    if (!outcome.ok) this.logger.warn(`Bluesky connect refused: ${outcome.message}`);
    await this.pages.render(
      res,
      'linkedin-done',
      { title: outcome.ok ? 'Bluesky connected' : 'Bluesky not connected', section: null, session: null, status: outcome.status },
      { ok: outcome.ok, message: outcome.message, loggedIn: outcome.session !== null, refreshTo: outcome.ok ? '/settings/accounts' : null },
    );
  }
}
