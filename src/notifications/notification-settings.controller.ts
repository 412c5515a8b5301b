import { Body, Controller, Get, Put } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { API_KEY_SCHEME, ApiErrors, ApiV1Errors, BODY_ERRORS } from '../common/openapi';
import { Auth, AuthContext } from '../workspaces/auth';
import { NotificationSettingsView, UpdateNotificationSettingsDto } from './notification-settings.dto';
import { NotificationSettingsService } from './notification-settings.service';

@ApiTags('notifications')
@ApiBearerAuth(API_KEY_SCHEME)
@ApiV1Errors()
@Controller('v1/settings/notifications')
export class NotificationSettingsController {
  constructor(private readonly settings: NotificationSettingsService) {}

  @Get()
  @ApiOperation({
    operationId: 'getNotificationSettings',
    summary: "The workspace's daily digest and alert settings, how mail is delivered, and the last digest.",
  })
  @ApiOkResponse({ type: NotificationSettingsView })
  get(@Auth() auth: AuthContext): Promise<NotificationSettingsView> {
    return this.settings.get(auth.workspaceId);
  }

  @Put()
  @ApiOperation({
    operationId: 'updateNotificationSettings',
    summary: 'Change the digest (enabled, recipients, hour, timezone, sendWhenEmpty) and alert settings. Absent fields keep their value.',
  })
  @ApiOkResponse({ type: NotificationSettingsView })
  @ApiErrors(BODY_ERRORS, { 400: 'A field is invalid (the message names it); nothing was saved.' })
  update(@Auth() auth: AuthContext, @Body() body: UpdateNotificationSettingsDto): Promise<NotificationSettingsView> {
    return this.settings.update(auth, body);
  }
}
