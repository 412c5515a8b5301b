import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AuditModule } from '../audit/audit.module';
import { LoginThrottleRepository } from './login-throttle.repository';
import { LoginThrottleService } from './login-throttle.service';
import { ApiKeyGuard } from './api-key.guard';
import { ApiKeysRepository } from './api-keys.repository';
import { ApiKeysService } from './api-keys.service';
import { WorkspacesController } from './workspaces.controller';
import { WorkspacesRepository } from './workspaces.repository';
import { WorkspacesService } from './workspaces.service';

@Module({
  imports: [AuditModule],
  controllers: [WorkspacesController],
  providers: [
    ApiKeysRepository,
    WorkspacesRepository,
    WorkspacesService,
    ApiKeysService,
    LoginThrottleRepository,
    LoginThrottleService,
    { provide: APP_GUARD, useClass: ApiKeyGuard },
  ],
  exports: [ApiKeysService, WorkspacesService, LoginThrottleService],
})
export class WorkspacesModule {}
