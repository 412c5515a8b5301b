import { Body, Controller, Get, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../../workspaces/auth';
import { PageExceptionFilter } from '../page-exception.filter';
import { PageRequest } from '../session/page-request';
import { PageSessionGuard } from '../session/page-session.guard';
import { ConnectPages, ConnectPageSpec } from './connect-pages';

const MASTODON: ConnectPageSpec = {
  provider: 'mastodon',
  label: 'Mastodon',
  cookie: 'herald_mastodon',
  cookiePath: '/settings/mastodon',
  connectPage: '/settings/accounts/connect/mastodon',
  identifierField: 'instanceUrl',
  // Any instance: the person names it.
  continueWith: 'page',
  connectedText: (name, postingAs) => `Mastodon account “${name}” connected (posting as ${postingAs}).`,
};

/**
 * "Connect with Mastodon" / "Reconnect with Mastodon": start (the instance's address and an
 * optional name, on the page) and the instance's redirect back (connect-pages.ts). Its path is
 * part of Herald's registration on every instance (mastodon-oauth.ts CALLBACK_PATH): it never moves.
 */
@ApiExcludeController()
@Public()
@UseFilters(PageExceptionFilter)
@Controller('settings/mastodon')
export class MastodonConnectController {
  constructor(private readonly connectPages: ConnectPages) {}

  @Post('start')
  @UseGuards(PageSessionGuard)
  start(@Req() req: PageRequest, @Res() res: Response, @Body() body: Record<string, unknown>): Promise<void> {
    return this.connectPages.start(req, res, body, MASTODON);
  }

  /** The instance sends the browser here with `code` and `state` (or `error=access_denied`). */
  @Get('callback')
  callback(@Req() req: PageRequest, @Res() res: Response, @Query() query: Record<string, unknown>): Promise<void> {
    return this.connectPages.callbackFrom(req, res, query, MASTODON);
  }
}
