import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Role, ROLES } from '../access/roles';
import type { ApiKeyView, WorkspaceView } from './api-keys.service';

/** The answers of /v1/workspaces and /v1/api-keys as OpenAPI schemas, implementing the service's views. */

@ApiSchema({ name: 'ApiKey' })
export class ApiKeyDto implements ApiKeyView {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ example: 'CI publisher' })
  name!: string;

  @ApiProperty({ description: 'the first characters of the key, to recognise it', example: 'hk_3fZk' })
  prefix!: string;

  @ApiProperty({ enum: ROLES, enumName: 'Role', description: 'what the key may do (docs/api.md "Roles")' })
  role!: Role;

  @ApiProperty({
    description:
      "the operator's key (HERALD_API_KEY, or the key printed at the first start): also creates workspaces; no API key can revoke it",
  })
  bootstrap!: boolean;

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

  @ApiProperty({ type: NewApiKeyDto, description: "the workspace's first API key (role owner)" })
  apiKey!: NewApiKeyDto;
}
