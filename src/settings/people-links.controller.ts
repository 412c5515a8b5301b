import { Body, Controller, Get, Inject, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { RESET_MAIL_EVERY_MS } from '../people/link-tokens';
import { InvitationForPage, LinkCheck, PeopleService } from '../people/people.service';
import { ResetRequests } from '../people/reset-requests.service';
import { Public } from '../workspaces/auth';
import { personMessage } from './form-validation';
import { PageExceptionFilter } from './page-exception.filter';
import { field, rawField } from './page-input';
import { PageRenderer } from './page-renderer';
import { checkFormToken, issueFormToken } from './session/public-form';
import { PageRequest, setSessionCookie } from './session/page-request';
import { SessionsService } from '../people/sessions.service';

const LINK_WORDS: Record<Exclude<LinkCheck<unknown>, { ok: true }>['status'], string> = {
  unknown: 'This link is not one Herald sent, or it was cut short. Copy the whole link from the mail.',
  used: 'This link was used already: each link works once.',
  revoked:
    'This link was withdrawn (a newer one was sent, the person or the invitation was removed, or whoever sent it may no longer give that role).',
  expired: 'This link has expired.',
};

/**
 * The pages that one-use links open, and "forgot your password": no session needed (the link's
 * token is the proof). Tokens travel in the query string, which the request log leaves out
 * (common/logging.ts logs paths only) and no page sends on (Referrer-Policy: no-referrer).
 */
@ApiExcludeController()
@Public()
@UseFilters(PageExceptionFilter)
@Controller('settings')
export class PeopleLinksController {
  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly people: PeopleService,
    private readonly resets: ResetRequests,
    private readonly sessions: SessionsService,
    private readonly pages: PageRenderer,
  ) {}

  // ---- invitations ----

  @Get('invitation')
  async invitationForm(@Res() res: Response, @Query() query: Record<string, unknown>): Promise<void> {
    const token = field(query, 'token');
    const check = await this.people.invitationFor(token);
    if (!check.ok) return this.linkProblem(res, check.status, 'Invitation');
    await this.showInvitation(res, token, check.value, {});
  }

  @Post('invitation')
  async acceptInvitation(@Req() req: PageRequest, @Res() res: Response, @Body() body: Record<string, unknown>): Promise<void> {
    checkFormToken(req, body, this.config);
    const token = field(body, 'token');
    const name = field(body, 'name');
    const password = rawField(body, 'password');
    const check = await this.people.invitationFor(token);
    if (!check.ok) return this.linkProblem(res, check.status, 'Invitation');
    // A first person's name and password were chosen when they were added: the form only confirms the address.
    const firstPerson = check.value.firstPerson;
    if (!firstPerson && password !== rawField(body, 'confirm')) {
      return this.showInvitation(res, token, check.value, { name }, 'the two passwords are not the same');
    }
    try {
      const accepted = await this.people.acceptInvitation(token, { name, password });
      if (!accepted.ok) return this.linkProblem(res, accepted.status, 'Invitation');
      const opened = await this.sessions.open(accepted.value);
      setSessionCookie(res, this.config, opened.token);
      const welcome = `Welcome to ${check.value.workspaceName}. You are logged in as ${accepted.value.role}; next time, log in with ${check.value.email} and your password.`;
      await this.pages.redirect(res, opened.session, '/settings/accounts', {
        tone: 'success',
        text: firstPerson ? `Your address is confirmed. ${welcome}` : welcome,
      });
    } catch (err) {
      const known = personMessage(err);
      if (!known) throw err;
      await this.showInvitation(res, token, check.value, { name }, known.message, known.status);
    }
  }

  private async showInvitation(
    res: Response,
    token: string,
    invitation: InvitationForPage,
    values: { name?: string },
    error?: string,
    status = 400,
  ): Promise<void> {
    await this.pages.render(
      res,
      'invitation',
      {
        title: invitation.firstPerson ? 'Confirm your address' : 'Join the workspace',
        section: null,
        session: null,
        status: error ? status : 200,
      },
      { formToken: issueFormToken(res, this.config, '/settings/invitation'), token, invitation, values, error },
    );
  }

  // ---- password reset ----

  @Get('forgot-password')
  async forgotForm(@Res() res: Response): Promise<void> {
    await this.pages.render(
      res,
      'forgot-password',
      { title: 'Forgot your password?', section: null, session: null },
      { formToken: issueFormToken(res, this.config, '/settings/forgot-password') },
    );
  }

  /**
   * The same answer in the same time whatever the address: whether it is a person's is nobody's
   * business here. The answer goes first; the link is looked for and mailed after (ResetRequests).
   */
  @Post('forgot-password')
  async forgot(@Req() req: PageRequest, @Res() res: Response, @Body() body: Record<string, unknown>): Promise<void> {
    checkFormToken(req, body, this.config);
    const email = field(body, 'email').slice(0, 254);
    await this.pages.render(
      res,
      'forgot-password',
      { title: 'Forgot your password?', section: null, session: null },
      {
        sent: true,
        minutes: RESET_MAIL_EVERY_MS / 60_000,
        formToken: issueFormToken(res, this.config, '/settings/forgot-password'),
      },
    );
    this.resets.afterAnswer(email);
  }

  @Get('reset-password')
  async resetForm(@Res() res: Response, @Query() query: Record<string, unknown>): Promise<void> {
    const token = field(query, 'token');
    const check = await this.people.resetFor(token);
    if (!check.ok) return this.linkProblem(res, check.status, 'Password reset');
    await this.showReset(res, token, check.value.email);
  }

  /** The new password; every other session of the person ends, and this browser is logged in. */
  @Post('reset-password')
  async reset(@Req() req: PageRequest, @Res() res: Response, @Body() body: Record<string, unknown>): Promise<void> {
    checkFormToken(req, body, this.config);
    const token = field(body, 'token');
    const password = rawField(body, 'password');
    const check = await this.people.resetFor(token);
    if (!check.ok) return this.linkProblem(res, check.status, 'Password reset');
    if (password !== rawField(body, 'confirm')) return this.showReset(res, token, check.value.email, 'the two passwords are not the same');
    try {
      const done = await this.people.completeReset(token, password);
      if (!done.ok) return this.linkProblem(res, done.status, 'Password reset');
      const opened = await this.sessions.open(done.value);
      if (done.value.principal.kind === 'person') await this.sessions.endOtherSessions(done.value.principal.id, opened.session.id);
      setSessionCookie(res, this.config, opened.token);
      await this.pages.redirect(res, opened.session, '/settings/accounts', {
        tone: 'success',
        text: 'Your new password is set. You were logged out everywhere else.',
      });
    } catch (err) {
      const known = personMessage(err);
      if (!known) throw err;
      await this.showReset(res, token, check.value.email, known.message, known.status);
    }
  }

  private async showReset(res: Response, token: string, email: string, error?: string, status = 400): Promise<void> {
    await this.pages.render(
      res,
      'reset-password',
      { title: 'Set a new password', section: null, session: null, status: error ? status : 200 },
      { formToken: issueFormToken(res, this.config, '/settings/reset-password'), token, email, error },
    );
  }

  private async linkProblem(res: Response, status: keyof typeof LINK_WORDS, what: string): Promise<void> {
    await this.pages.render(
      res,
      'link-problem',
      { title: `${what} link`, section: null, session: null, status: status === 'unknown' ? 404 : 410 },
      { message: LINK_WORDS[status], invitation: what === 'Invitation' },
    );
  }
}
