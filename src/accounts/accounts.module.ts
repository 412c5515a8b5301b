import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { ConnectorsModule } from '../connectors/connectors.module';
import { QueueCoreModule } from '../queue/queue-core.module';
import { AccountsController } from './accounts.controller';
import { AccountReportsRepository } from './account-reports.repository';
import { AccountsRepository } from './accounts.repository';
import { AccountsService } from './accounts.service';

@Module({
  imports: [AuditModule, ConnectorsModule, QueueCoreModule],
  controllers: [AccountsController],
  providers: [AccountsRepository, AccountsService, AccountReportsRepository],
  exports: [AccountsRepository, AccountReportsRepository, AccountsService],
})
export class AccountsModule {}
