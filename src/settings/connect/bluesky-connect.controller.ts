import { Body, Controller, Get, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../../workspaces/auth';
import { PageExceptionFilter } from '../page-exception.filter';
import { PageRequest } from '../session/page-request';
import { PageSessionGuard } from '../session/page-session.guard';
import { ConnectPages, ConnectPageSpec } from './connect-pages';

const BLUESKY: ConnectPageSpec = {
  provider: 'bluesky',
  label: 'Bluesky',
  cookie: 'herald_bluesky',
  cookiePath: '/settings/bluesky',
  connectPage: '/settings/accounts/connect/bluesky',
  identifierField: 'identifier',
  // The authorization server is whichever one the person's PDS names.
  continueWith: 'page',
  connectedText: (name, postingAs) => `Bluesky account “${name}” connected with OAuth (posting as ${postingAs}).`,
};

/** "Connect with Bluesky" / "Reconnect with Bluesky": start (a form on the page) and the authorization server's redirect back (connect-pages.ts). */
@ApiExcludeController()
@Public()
@UseFilters(PageExceptionFilter)
@Controller('settings/bluesky')
export class BlueskyConnectController {
  constructor(private readonly connectPages: ConnectPages) {}

  @Post('start')
  @UseGuards(PageSessionGuard)
  start(@Req() req: PageRequest, @Res() res: Response, @Body() body: Record<string, unknown>): Promise<void> {
    return this.connectPages.start(req, res, body, BLUESKY);
  }

  /** The authorization server sends the browser here with `code`, `state` and `iss` (or `error`). */
  @Get('callback')
  callback(@Req() req: PageRequest, @Res() res: Response, @Query() query: Record<string, unknown>): Promise<void> {
    return this.connectPages.callbackFrom(req, res, query, BLUESKY);
  }
}
