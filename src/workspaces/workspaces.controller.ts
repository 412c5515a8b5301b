import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { PageQuery } from '../common/pagination';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { ApiKeysService } from './api-keys.service';
import { Auth, AuthContext, RequireRole } from './auth';
import { CreateApiKeyDto, CreateWorkspaceDto } from './workspaces.dto';


@ApiTags('workspaces')
@ApiBearerAuth()
@Controller('v1')
export class WorkspacesController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @Post('workspaces')
  @RequireRole('admin')
  @ApiOperation({ summary: 'Create a workspace and its first API key (bootstrap key only). The key is shown once.' })
  createWorkspace(@Body() body: CreateWorkspaceDto) {
    return this.apiKeys.createWorkspace(body.name);
  }

  @Post('api-keys')
  @ApiOperation({ summary: 'Create an API key in the caller\'s workspace. The key is shown once.' })
  createKey(@Auth() auth: AuthContext, @Body() body: CreateApiKeyDto) {
    return this.apiKeys.createKey(auth.workspaceId, body.name);
  }

  @Get('api-keys')
  @ApiOperation({ summary: 'List the workspace\'s active API keys (never the keys themselves).' })
  listKeys(@Auth() auth: AuthContext, @Query() query: PageQuery) {
    return this.apiKeys.list(auth.workspaceId, query.limit, query.cursor);
  }

  @Delete('api-keys/:id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Revoke an API key. Requests with it get 401 from now on.' })
  async revokeKey(@Auth() auth: AuthContext, @Param('id', new ParseIdPipe('API key')) id: string): Promise<void> {
    await this.apiKeys.revoke(auth.workspaceId, id);
  }
}
