import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { AccountStateModule } from '../account-state/account-state.module';
import { AccountsModule } from '../accounts/accounts.module';
import { JobsModule } from '../jobs/jobs.module';
import { MediaModule } from '../media/media.module';
import { QueueCoreModule } from '../queue/queue-core.module';
import { DeadLetterController } from './dead-letter.controller';
import { DeadLetterMetrics } from './dead-letter.metrics';
import { DeadLetterService } from './dead-letter.service';
import { JobRetryController } from './job-retry.controller';

/** Inspect, edit, requeue and discard dead jobs (GET/PATCH/DELETE /v1/dlq…). */
@Module({
  imports: [AuditModule, JobsModule, MediaModule, QueueCoreModule, AccountStateModule, AccountsModule],
  controllers: [DeadLetterController, JobRetryController],
  providers: [DeadLetterService, DeadLetterMetrics],
  exports: [DeadLetterService],
})
export class DeadLetterModule {}
