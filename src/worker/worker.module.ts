import { Module } from '@nestjs/common';
import { AccountStateModule } from '../account-state/account-state.module';
import { AccountsModule } from '../accounts/accounts.module';
import { ConnectorsModule } from '../connectors/connectors.module';
import { MediaModule } from '../media/media.module';
import { AttemptRunner } from './attempt-runner';
import { QueueCoreModule } from '../queue/queue-core.module';
import { QueueListener } from './queue-listener';
import { WorkerMetrics } from './worker.metrics';
import { WorkerService } from './worker.service';

/**
 * The delivery worker, apart from the API: the same process runs both by default; a process
 * with WORKER_ENABLED=false serves the API only (the module is loaded, the loop not started).
 */
@Module({
  imports: [QueueCoreModule, AccountStateModule, AccountsModule, ConnectorsModule, MediaModule],
  providers: [QueueListener, WorkerMetrics, AttemptRunner, WorkerService],
  exports: [WorkerService],
})
export class WorkerModule {}
