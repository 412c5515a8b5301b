import { Injectable } from '@nestjs/common';
import { WorkspacesRepository } from './workspaces.repository';
import type { WorkspaceEntity } from './workspace.entity';

/** Workspaces as other modules read them (a mail's "your workspace" name). */
@Injectable()
export class WorkspacesService {
  constructor(private readonly workspaces: WorkspacesRepository) {}

  find(id: string): Promise<WorkspaceEntity | null> {
    return this.workspaces.find(id);
  }
}
