import { Module } from '@nestjs/common';
import { QueueCoreModule } from '../queue/queue-core.module';
import { JobsController } from './jobs.controller';
import { JobReportsRepository } from './job-reports.repository';
import { JobReportsService } from './job-reports.service';
import { JobsRepository } from './jobs.repository';
import { JobsService } from './jobs.service';

@Module({
  imports: [QueueCoreModule],
  controllers: [JobsController],
  providers: [JobsRepository, JobsService, JobReportsRepository, JobReportsService],
  exports: [JobsService, JobReportsService],
})
export class JobsModule {}
