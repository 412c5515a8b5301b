import { Module } from '@nestjs/common';
import { ConnectorsModule } from '../connectors/connectors.module';
import { QueueCoreModule } from '../queue/queue-core.module';
import { AccountsController } from './accounts.controller';
import { AccountsRepository } from './accounts.repository';
import { AccountsService } from './accounts.service';

@Module({
  imports: [ConnectorsModule, QueueCoreModule],
  controllers: [AccountsController],
  providers: [AccountsRepository, AccountsService],
  exports: [AccountsRepository],
})
export class AccountsModule {}
