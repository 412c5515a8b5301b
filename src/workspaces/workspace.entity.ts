/** A row of `workspaces` (plain data: the schema is the migrations', see database/db.ts). */
export interface WorkspaceEntity {
  id: string;
  name: string;
  isBootstrap: boolean;
  createdAt: Date;
}
