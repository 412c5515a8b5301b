import { Module } from '@nestjs/common';
import { QueueCoreModule } from '../queue/queue-core.module';
import { JobsController } from './jobs.controller';
import { JobReportsService } from './job-reports.service';
import { JobsService } from './jobs.service';

@Module({
  imports: [QueueCoreModule],
  controllers: [JobsController],
  providers: [JobsService, JobReportsService],
  exports: [JobsService, JobReportsService],
})
export class JobsModule {}
