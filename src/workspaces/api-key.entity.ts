import type { Role } from '../access/roles';

/** A row of `api_keys` (plain data: the schema is the migrations', see database/db.ts). */
export interface ApiKeyEntity {
  id: string;
  workspaceId: string;
  name: string;
  keyHash: Buffer;
  prefix: string;
  role: Role;
  /** The operator's key (HERALD_API_KEY or the key printed at the first start). */
  bootstrap: boolean;
  createdAt: Date;
  revokedAt: Date | null;
  /** Set when a new HERALD_API_KEY retired this bootstrap key (it then stays revoked). */
  replacedBy: string | null;
}
