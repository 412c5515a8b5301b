import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { ApiKeyRole } from './api-key.entity';
import type { ApiKeyView, WorkspaceView } from './api-keys.service';

/** The answers of /v1/workspaces and /v1/api-keys as OpenAPI schemas, implementing the service's views. */

const ROLES: readonly ApiKeyRole[] = ['admin', 'member'];

@ApiSchema({ name: 'ApiKey' })
export class ApiKeyDto implements ApiKeyView {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ example: 'CI publisher' })
  name!: string;

  @ApiProperty({ description: 'the first characters of the key, to recognise it', example: 'hk_3fZk' })
  prefix!: string;

  @ApiProperty({ enum: ROLES, enumName: 'ApiKeyRole', description: 'admin: the bootstrap key, which may also create workspaces' })
  role!: ApiKeyRole;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

@ApiSchema({ name: 'NewApiKey' })
export class NewApiKeyDto extends ApiKeyDto {
  @ApiProperty({ description: 'the key itself, shown this once (only its hash is stored)', example: 'hk_3fZkq2…' })
  key!: string;
}

@ApiSchema({ name: 'Workspace' })
export class WorkspaceDto implements WorkspaceView {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ example: 'Marketing' })
  name!: string;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

@ApiSchema({ name: 'NewWorkspace' })
export class NewWorkspaceDto {
  @ApiProperty({ type: WorkspaceDto })
  workspace!: WorkspaceDto;

  @ApiProperty({ type: NewApiKeyDto, description: "the workspace's first API key" })
  apiKey!: NewApiKeyDto;
}
