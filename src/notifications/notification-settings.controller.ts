import { Body, Controller, Get, Put } from '@nestjs/common';
import { ApiBadRequestResponse, ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { Auth, AuthContext } from '../workspaces/auth';
import { NotificationErrorView, NotificationSettingsView, UpdateNotificationSettingsDto } from './notification-settings.dto';
import { NotificationSettingsService } from './notification-settings.service';

@ApiTags('notifications')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: NotificationErrorView, description: 'No API key, or not a valid one' })
@Controller('v1/settings/notifications')
export class NotificationSettingsController {
  constructor(private readonly settings: NotificationSettingsService) {}

  @Get()
  @ApiOperation({ summary: "The workspace's daily digest and alert settings, how mail is delivered, and the last digest." })
  @ApiOkResponse({ type: NotificationSettingsView })
  get(@Auth() auth: AuthContext): Promise<NotificationSettingsView> {
    return this.settings.get(auth.workspaceId);
  }

  @Put()
  @ApiOperation({ summary: 'Change the digest (enabled, recipients, hour, timezone, sendWhenEmpty) and alert settings. Absent fields keep their value.' })
  @ApiOkResponse({ type: NotificationSettingsView })
  @ApiBadRequestResponse({ type: NotificationErrorView, description: 'A field is invalid (the message names it); nothing was saved' })
  update(@Auth() auth: AuthContext, @Body() body: UpdateNotificationSettingsDto): Promise<NotificationSettingsView> {
    return this.settings.update(auth.workspaceId, body);
  }
}
