import { Body, Controller, Get, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../../workspaces/auth';
import { PageExceptionFilter } from '../page-exception.filter';
import { OAUTH_COOKIE, PageRequest } from '../session/page-request';
import { PageSessionGuard } from '../session/page-session.guard';
import { ConnectPages, ConnectPageSpec } from './connect-pages';

const LINKEDIN: ConnectPageSpec = {
  provider: 'linkedin',
  label: 'LinkedIn',
  cookie: OAUTH_COOKIE,
  cookiePath: '/settings/linkedin',
  connectPage: '/settings/accounts/connect/linkedin',
  // LinkedIn's authorization page is at the operator's one LINKEDIN_OAUTH_BASE_URL, which the page's form-action lists.
  continueWith: 'redirect',
  connectedText: (name, postingAs) => `LinkedIn account “${name}” connected (posting as ${postingAs}).`,
};

/** "Connect with LinkedIn": start (a form on the page) and LinkedIn's redirect back (connect-pages.ts). */
@ApiExcludeController()
@Public()
@UseFilters(PageExceptionFilter)
@Controller('settings/linkedin')
export class LinkedInConnectController {
  constructor(private readonly connectPages: ConnectPages) {}

  @Post('start')
  @UseGuards(PageSessionGuard)
  start(@Req() req: PageRequest, @Res() res: Response, @Body() body: Record<string, unknown>): Promise<void> {
    return this.connectPages.start(req, res, body, LINKEDIN);
  }

  /** LinkedIn sends the browser here with `code` and `state` (or `error`). */
  @Get('callback')
  callback(@Req() req: PageRequest, @Res() res: Response, @Query() query: Record<string, unknown>): Promise<void> {
    return this.connectPages.callbackFrom(req, res, query, LINKEDIN);
  }
}
