import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiNoContentResponse, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { API_KEY_SCHEME, ApiErrors, ApiPageResponse, ApiV1Errors, BODY_ERRORS } from '../common/openapi';
import { PageQuery } from '../common/pagination';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { ApiKeysService } from './api-keys.service';
import { Auth, AuthContext } from './auth';
import { ApiKeyDto, NewApiKeyDto, NewWorkspaceDto } from './workspace-view.dto';
import { CreateApiKeyDto, CreateWorkspaceDto } from './workspaces.dto';

@ApiTags('workspaces')
@ApiBearerAuth(API_KEY_SCHEME)
@ApiV1Errors()
@Controller('v1')
export class WorkspacesController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @Post('workspaces')
  @ApiOperation({
    operationId: 'createWorkspace',
    summary: 'Create a workspace and its first API key (bootstrap key only); the key is shown once',
  })
  @ApiResponse({ status: 201, description: 'The workspace and its first key', type: NewWorkspaceDto })
  @ApiErrors(BODY_ERRORS)
  createWorkspace(@Auth() auth: AuthContext, @Body() body: CreateWorkspaceDto) {
    return this.apiKeys.createWorkspace(auth, body.name);
  }

  @Post('api-keys')
  @ApiOperation({
    operationId: 'createApiKey',
    summary: "Create an API key in the caller's workspace, with a role (default owner); the key is shown once",
  })
  @ApiResponse({ status: 201, description: 'The new key, with `key` shown this once', type: NewApiKeyDto })
  @ApiErrors(BODY_ERRORS)
  createKey(@Auth() auth: AuthContext, @Body() body: CreateApiKeyDto) {
    return this.apiKeys.createKey(auth, body.name, body.role);
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
  @ApiOperation({
    operationId: 'revokeApiKey',
    summary: 'Revoke an API key; requests with it get 401 from now on',
    description: "No key revokes a key of a higher role, and the operator's bootstrap key cannot be revoked through the API (403).",
  })
  @ApiParam({ name: 'id', format: 'uuid', description: "the API key's id (not the key)" })
  @ApiNoContentResponse({ description: 'Revoked' })
  @ApiErrors([403, 404], {
    403: "A key of a higher role, or the operator's bootstrap key, or a caller who is not an owner. Nothing was changed.",
  })
  async revokeKey(@Auth() auth: AuthContext, @Param('id', new ParseIdPipe('API key')) id: string): Promise<void> {
    await this.apiKeys.revoke(auth, id);
  }
}
