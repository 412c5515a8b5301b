import { Body, Controller, Get, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../workspaces/auth';
import { FormProblem, personMessage } from './form-validation';
import { PageExceptionFilter } from './page-exception.filter';
import { rawField } from './page-input';
import { PageRenderer } from './page-renderer';
import { clientAddress, PageRequest, requirePage } from './session/page-request';
import { PageSessionGuard } from './session/page-session.guard';
import type { PageSession } from '../people/session.types';
import { SessionsService } from '../people/sessions.service';

/** "Your account": who is logged in, and a person's own password. */
@ApiExcludeController()
@Public()
@UseGuards(PageSessionGuard)
@UseFilters(PageExceptionFilter)
@Controller('settings/profile')
export class ProfilePageController {
  constructor(
    private readonly pages: PageRenderer,
    private readonly sessions: SessionsService,
  ) {}

  @Get()
  async show(@Req() req: PageRequest, @Res() res: Response): Promise<void> {
    await this.render(res, requirePage(req));
  }

  private async render(res: Response, session: PageSession, error?: string, status = 400): Promise<void> {
    await this.pages.render(
      res,
      'profile',
      { title: 'Your account', section: 'profile', session, status: error ? status : 200 },
      { isPerson: session.auth.principal.kind === 'person', label: session.auth.label, role: session.auth.role, error },
    );
  }

  /** A new password (knowing the current one); the person's other sessions end. */
  @Post('password')
  async password(@Req() req: PageRequest, @Res() res: Response, @Body() body: Record<string, unknown>): Promise<void> {
    const session = requirePage(req);
    try {
      const next = rawField(body, 'password');
      if (next !== rawField(body, 'confirm')) throw new FormProblem('the two new passwords are not the same');
      const ended = await this.sessions.changePassword(session, rawField(body, 'current'), next, clientAddress(req));
      await this.pages.redirect(res, session, '/settings/profile', {
        tone: 'success',
        text: `Your password is changed.${ended > 0 ? ` Your ${ended} other session${ended === 1 ? ' was' : 's were'} logged out.` : ''}`,
      });
    } catch (err) {
      const known = personMessage(err);
      if (!known) throw err;
      await this.render(res, session, known.message, known.status);
    }
  }
}
