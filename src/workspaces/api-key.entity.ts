export type ApiKeyRole = 'admin' | 'member';

/** A row of `api_keys` (plain data: the schema is the migrations', see database/db.ts). */
export interface ApiKeyEntity {
  id: string;
  workspaceId: string;
  name: string;
  keyHash: Buffer;
  prefix: string;
  role: ApiKeyRole;
  createdAt: Date;
  revokedAt: Date | null;
}
