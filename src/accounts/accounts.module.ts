import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { AccountStateModule } from '../account-state/account-state.module';
import { ConnectorsModule } from '../connectors/connectors.module';
import { EventsModule } from '../events/events.module';
import { QueueCoreModule } from '../queue/queue-core.module';
import { AccountsController } from './accounts.controller';
import { AccountReportsRepository } from './account-reports.repository';
import { AccountReportsService } from './account-reports.service';
import { AccountsRepository } from './accounts.repository';
import { AccountsService } from './accounts.service';
import { EventEndpointsRepository } from './event-endpoints.repository';
import { EventEndpointsService } from './event-endpoints.service';
import { ConnectStatesRepository } from './connect/connect-states.repository';
import { ConnectService } from './connect/connect.service';

@Module({
  imports: [AuditModule, ConnectorsModule, EventsModule, QueueCoreModule, AccountStateModule],
  controllers: [AccountsController],
  providers: [
    AccountsRepository,
    AccountsService,
    AccountReportsRepository,
    AccountReportsService,
    ConnectStatesRepository,
    ConnectService,
    EventEndpointsRepository,
    EventEndpointsService,
  ],
  exports: [AccountsService, AccountReportsService, ConnectService, EventEndpointsService],
})
export class AccountsModule {}
