import { Body, Controller, Get, Inject, Logger, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { HERALD_CONFIG, HeraldConfig } from '../../config/config';
import { Public } from '../../workspaces/auth';
import { personMessage } from '../form-validation';
import { PageExceptionFilter } from '../page-exception.filter';
import { field, isUuid } from '../page-input';
import { PageRenderer } from '../page-renderer';
import { cookie, isHttps, OAUTH_COOKIE, PageRequest, requirePage } from '../session/page-request';
import { PageSessionGuard } from '../session/page-session.guard';
import { STATE_TTL_MS } from './linkedin-oauth';
import { CallbackOutcome, LinkedInOAuthService } from './linkedin-oauth.service';

const COOKIE_PATH = '/settings/linkedin';

/** "Connect with LinkedIn": start (a form on the page) and LinkedIn's redirect back. */
@ApiExcludeController()
@Public()
@UseFilters(PageExceptionFilter)
@Controller('settings/linkedin')
export class LinkedInOAuthController {
  private readonly logger = new Logger('LinkedInConnect');

  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly oauth: LinkedInOAuthService,
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
      const { url, browserToken } = await this.oauth.start(session, target);
      // SameSite=Lax: LinkedIn's redirect back is a cross-site top-level GET, which carries Lax
      // cookies but not the Strict session cookie.
      res.cookie(OAUTH_COOKIE, browserToken, {
        httpOnly: true,
        secure: isHttps(this.config, res.req),
        sameSite: 'lax',
        path: COOKIE_PATH,
        maxAge: STATE_TTL_MS,
      });
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
   * browser) says whose flow it is, and the answer is a page of its own that goes on to the
   * accounts page with a same-site navigation (where the session cookie is sent again).
   */
  @Get('callback')
  async callback(@Req() req: PageRequest, @Res() res: Response, @Query() query: Record<string, unknown>): Promise<void> {
    const q = (name: string) => (typeof query[name] === 'string' ? query[name] : '');
    let outcome: CallbackOutcome;
    try {
      outcome = await this.oauth.callback(
        { code: q('code'), state: q('state'), error: q('error'), errorDescription: q('error_description') },
        cookie(req, OAUTH_COOKIE),
      );
    } catch (err) {
      const known = personMessage(err);
      if (!known) throw err;
      outcome = { ok: false, status: known.status, message: `${known.message}. Nothing was changed.`, session: null, stateUsed: true };
    }
    // Only a matching state uses the browser's cookie up: a forged link must not spoil the
    // person's own flow in progress.
    if (outcome.stateUsed) res.clearCookie(OAUTH_COOKIE, { path: COOKIE_PATH });
    if (!outcome.ok) this.logger.warn(`LinkedIn connect refused: ${outcome.message}`);
    await this.pages.render(
      res,
      'linkedin-done',
      { title: outcome.ok ? 'LinkedIn connected' : 'LinkedIn not connected', section: null, session: null, status: outcome.status },
      { ok: outcome.ok, message: outcome.message, loggedIn: outcome.session !== null, refreshTo: outcome.ok ? '/settings/accounts' : null },
    );
  }
}
