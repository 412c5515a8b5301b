import { ApiKeyEntity } from '../workspaces/api-key.entity';
import { WorkspaceEntity } from '../workspaces/workspace.entity';

/** Every TypeORM entity. The schema itself comes from migrations/, never from these. */
export const ENTITIES = [WorkspaceEntity, ApiKeyEntity];
