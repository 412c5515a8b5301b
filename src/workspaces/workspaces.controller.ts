import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiNoContentResponse, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { API_KEY_SCHEME, ApiErrors, ApiPageResponse, ApiV1Errors, BODY_ERRORS } from '../common/openapi';
import { PageQuery } from '../common/pagination';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { ApiKeysService } from './api-keys.service';
import { Auth, AuthContext, RequireRole } from './auth';
import { ApiKeyDto, NewApiKeyDto, NewWorkspaceDto } from './workspace-view.dto';
import { CreateApiKeyDto, CreateWorkspaceDto } from './workspaces.dto';

@ApiTags('workspaces')
@ApiBearerAuth(API_KEY_SCHEME)
@ApiV1Errors()
@Controller('v1')
export class WorkspacesController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @Post('workspaces')
  @RequireRole('admin')
  @ApiOperation({
    operationId: 'createWorkspace',
    summary: 'Create a workspace and its first API key (bootstrap key only); the key is shown once',
  })
  @ApiResponse({ status: 201, description: 'The workspace and its first key', type: NewWorkspaceDto })
  @ApiErrors([...BODY_ERRORS, 403], { 403: 'Only the bootstrap API key may create workspaces.' })
  createWorkspace(@Body() body: CreateWorkspaceDto) {
    return this.apiKeys.createWorkspace(body.name);
  }

  @Post('api-keys')
  @ApiOperation({ operationId: 'createApiKey', summary: "Create an API key in the caller's workspace; the key is shown once" })
  @ApiResponse({ status: 201, description: 'The new key, with `key` shown this once', type: NewApiKeyDto })
  @ApiErrors(BODY_ERRORS)
  createKey(@Auth() auth: AuthContext, @Body() body: CreateApiKeyDto) {
    return this.apiKeys.createKey(auth.workspaceId, body.name);
  }

  @Get('api-keys')
  @ApiOperation({ operationId: 'listApiKeys', summary: "List the workspace's active API keys (never the keys themselves)" })
  @ApiPageResponse(ApiKeyDto)
  @ApiErrors([400])
  listKeys(@Auth() auth: AuthContext, @Query() query: PageQuery) {
    return this.apiKeys.list(auth.workspaceId, query.limit, query.cursor);
  }

  @Delete('api-keys/:id')
  @HttpCode(204)
  @ApiOperation({ operationId: 'revokeApiKey', summary: 'Revoke an API key; requests with it get 401 from now on' })
  @ApiParam({ name: 'id', format: 'uuid', description: "the API key's id (not the key)" })
  @ApiNoContentResponse({ description: 'Revoked' })
  @ApiErrors([404])
  async revokeKey(@Auth() auth: AuthContext, @Param('id', new ParseIdPipe('API key')) id: string): Promise<void> {
    await this.apiKeys.revoke(auth.workspaceId, id);
  }
}
