import { Module } from '@nestjs/common';
import { QueueCoreModule } from '../queue/queue-core.module';
import { JobsController } from './jobs.controller';
import { JobReportsRepository } from './job-reports.repository';
import { JobsRepository } from './jobs.repository';
import { JobsService } from './jobs.service';

@Module({
  imports: [QueueCoreModule],
  controllers: [JobsController],
  providers: [JobsRepository, JobsService, JobReportsRepository],
  exports: [JobsRepository, JobReportsRepository, JobsService],
})
export class JobsModule {}
