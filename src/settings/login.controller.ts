import { Body, Controller, Get, Inject, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { randomBytes } from 'node:crypto';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { Public } from '../workspaces/auth';
import { PageExceptionFilter } from './page-exception.filter';
import { field, rawField, safeNextPath } from './page-input';
import { PageRenderer } from './page-renderer';
import { CsrfRefused } from './session/page-errors';
import {
  clearSessionCookie,
  clientAddress,
  cookie,
  isHttps,
  LOGIN_COOKIE,
  PageRequest,
  refuseCrossSite,
  requirePage,
  SESSION_COOKIE,
  setSessionCookie,
} from './session/page-request';
import { PageSessionGuard } from './session/page-session.guard';
import { SessionsService } from '../people/sessions.service';
import { sameSecret } from './session/same-secret';

/** Logging in and out of the settings page, and its static files. */
@ApiExcludeController()
@Public()
@UseFilters(PageExceptionFilter)
@Controller('settings')
export class LoginController {
  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly sessions: SessionsService,
    private readonly pages: PageRenderer,
  ) {}

  @Get()
  async root(@Req() req: PageRequest, @Res() res: Response): Promise<void> {
    const session = await this.sessions.resolve(cookie(req, SESSION_COOKIE));
    res.redirect(303, session ? '/settings/accounts' : '/settings/login');
  }

  @Get('login')
  async loginForm(@Req() req: PageRequest, @Res() res: Response, @Query() query: Record<string, unknown>): Promise<void> {
    const next = safeNextPath(query.next);
    if (await this.sessions.resolve(cookie(req, SESSION_COOKIE))) {
      res.redirect(303, next);
      return;
    }
    const notice =
      query.expired !== undefined
        ? 'Your session has ended. Log in again to go on.'
        : query.out !== undefined
          ? 'You are logged out.'
          : null;
    await this.showLogin(res, next, { notice });
  }

  /**
   * The key travels in a POST body only (never a URL, so never a log line or browser history).
   * A refused key gets one sentence that does not say why; repeated wrong keys are slowed.
   */
  @Post('login')
  async login(@Req() req: PageRequest, @Res() res: Response, @Body() body: Record<string, unknown>): Promise<void> {
    refuseCrossSite(req, this.config);
    const formToken = field(body, '_csrf');
    const cookieToken = cookie(req, LOGIN_COOKIE) ?? '';
    if (cookieToken === '' || !sameSecret(formToken, cookieToken)) throw new CsrfRefused();
    const next = safeNextPath(field(body, 'next'));
    // Two forms post here: a person's address and password, or an API key.
    const byPassword = field(body, 'apiKey') === '' && field(body, 'email') !== '';
    const email = field(body, 'email').slice(0, 254);
    const result = byPassword
      ? await this.sessions.loginPerson(email, rawField(body, 'password'), clientAddress(req))
      : await this.sessions.login(field(body, 'apiKey'), clientAddress(req));
    if (result.ok) {
      res.clearCookie(LOGIN_COOKIE, { path: '/settings/login' });
      setSessionCookie(res, this.config, result.token);
      res.redirect(303, next);
      return;
    }
    if (result.reason === 'throttled') {
      const seconds = Math.ceil(result.retryAfterMs / 1000);
      res.setHeader('Retry-After', String(seconds));
      const wait = `Wait ${seconds} second${seconds === 1 ? '' : 's'}, then try again.`;
      await this.showLogin(
        res,
        next,
        byPassword
          ? { error: `Too many wrong passwords were tried from your address or for this email address. ${wait}`, email }
          : { error: `Too many wrong keys were tried from your address. ${wait}`, keyFirst: true },
        429,
      );
      return;
    }
    // A wrong password and an unknown address get this same sentence.
    await this.showLogin(
      res,
      next,
      byPassword
        ? { error: 'That email address and password were not accepted. Check them and try again.', email }
        : { error: 'That API key was not accepted. Check it and try again.', keyFirst: true },
      401,
    );
  }

  private async showLogin(
    res: Response,
    next: string,
    messages: { notice?: string | null; error?: string; email?: string; keyFirst?: boolean },
    status = 200,
  ): Promise<void> {
    const token = randomBytes(32).toString('base64url');
    res.cookie(LOGIN_COOKIE, token, { httpOnly: true, secure: isHttps(this.config, res.req), sameSite: 'strict', path: '/settings/login' });
    await this.pages.render(
      res,
      'login',
      { title: 'Log in', section: null, session: null, status },
      { loginToken: token, next, ...messages },
    );
  }

  @Post('logout')
  @UseGuards(PageSessionGuard)
  async logout(@Req() req: PageRequest, @Res() res: Response, @Body() body: Record<string, unknown>): Promise<void> {
    const session = requirePage(req);
    if (field(body, 'everywhere') === 'yes') await this.sessions.logoutEverywhere(session);
    else await this.sessions.logout(session);
    clearSessionCookie(res, this.config);
    res.redirect(303, '/settings/login?out=1');
  }

  /** The stylesheet and the script, at URLs that change with their content: cached for a year. */
  @Get('assets/:hash/:name')
  asset(@Param('hash') hash: string, @Param('name') name: string, @Res() res: Response): void {
    const asset = this.pages.assets.get(name);
    if (!asset || !asset.url.endsWith(`/${hash}/${name}`)) {
      res.status(404).type('text/plain').send('Not found');
      return;
    }
    res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    res.type(asset.type).send(asset.body);
  }
}
