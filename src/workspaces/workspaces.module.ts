import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { ApiKeysRepository } from './api-keys.repository';
import { ApiKeysService } from './api-keys.service';
import { WorkspacesController } from './workspaces.controller';
import { WorkspacesRepository } from './workspaces.repository';
import { WorkspacesService } from './workspaces.service';

@Module({
  imports: [AuditModule],
  controllers: [WorkspacesController],
  providers: [ApiKeysRepository, WorkspacesRepository, WorkspacesService, ApiKeysService],
  exports: [ApiKeysService, WorkspacesService],
})
export class WorkspacesModule {}
