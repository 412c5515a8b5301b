import { Module } from '@nestjs/common';
import { AccountStateModule } from '../account-state/account-state.module';
import { ConnectorsModule } from '../connectors/connectors.module';
import { QueueCoreModule } from '../queue/queue-core.module';
import { AccountsController } from './accounts.controller';
import { AccountReportsRepository } from './account-reports.repository';
import { AccountReportsService } from './account-reports.service';
import { AccountsRepository } from './accounts.repository';
import { AccountsService } from './accounts.service';

@Module({
  imports: [ConnectorsModule, QueueCoreModule, AccountStateModule],
  controllers: [AccountsController],
  providers: [AccountsRepository, AccountsService, AccountReportsRepository, AccountReportsService],
  exports: [AccountsService, AccountReportsService],
})
export class AccountsModule {}
