import { Body, Controller, Get, Inject, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { RecipientsService } from '../notifications/recipients.service';
import { Public } from '../workspaces/auth';
import { PageExceptionFilter } from './page-exception.filter';
import { field } from './page-input';
import { PageRenderer } from './page-renderer';
import { checkFormToken, issueFormToken } from './session/public-form';
import type { PageRequest } from './session/page-request';

const PATH = '/settings/confirm-recipient';
const NOT_LIVE =
  'This link does not work (any more): it was used already, it has expired, the address was taken off the list, or the link was cut short. Nothing was changed. An owner of the workspace can add the address again to send a new link.';

/**
 * The page a recipient confirmation link opens (no session: the link's token is the proof). The
 * GET only shows what the link is for, with a button: mail scanners that follow links confirm
 * nothing. The POST (with the form's double-submit token) confirms, once.
 */
@ApiExcludeController()
@Public()
@UseFilters(PageExceptionFilter)
@Controller('settings/confirm-recipient')
export class RecipientConfirmController {
  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly recipients: RecipientsService,
    private readonly pages: PageRenderer,
  ) {}

  @Get()
  async show(@Res() res: Response, @Query() query: Record<string, unknown>): Promise<void> {
    const token = field(query, 'token');
    const link = await this.recipients.linkFor(token);
    if (!link) return this.problem(res);
    await this.pages.render(
      res,
      'confirm-recipient',
      { title: 'Confirm notifications', section: null, session: null },
      { formToken: issueFormToken(res, this.config, PATH), token, ...link },
    );
  }

  @Post()
  async confirm(@Req() req: PageRequest, @Res() res: Response, @Body() body: Record<string, unknown>): Promise<void> {
    checkFormToken(req, body, this.config);
    const done = await this.recipients.confirm(field(body, 'token'));
    if (!done) return this.problem(res);
    await this.pages.render(
      res,
      'confirm-recipient',
      { title: 'Notifications confirmed', section: null, session: null },
      { confirmed: true, ...done },
    );
  }

  private async problem(res: Response): Promise<void> {
    await this.pages.render(
      res,
      'link-problem',
      { title: 'Confirmation link', section: null, session: null, status: 410 },
      { message: NOT_LIVE, recipient: true },
    );
  }
}
