import { Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { API_KEY_SCHEME, ApiV1Errors } from '../common/openapi';
import { DigestPreviewView } from './notification-settings.dto';
import { NotificationSettingsService } from './notification-settings.service';
import { Auth, AuthContext } from '../workspaces/auth';

@ApiTags('notifications')
@ApiBearerAuth(API_KEY_SCHEME)
@ApiV1Errors()
@Controller('v1/digest')
export class DigestPreviewController {
  constructor(private readonly settings: NotificationSettingsService) {}

  @Post('preview')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'previewDigest',
    summary: 'The digest a workspace would get if it were made now (subject, HTML and text), without sending or recording anything.',
  })
  @ApiOkResponse({ type: DigestPreviewView })
  preview(@Auth() auth: AuthContext): Promise<DigestPreviewView> {
    return this.settings.preview(auth.workspaceId);
  }
}
