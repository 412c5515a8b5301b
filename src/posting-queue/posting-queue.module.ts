import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module';
import { AuditModule } from '../audit/audit.module';
import { PostingQueueController } from './posting-queue.controller';
import { PostingQueueRepository } from './posting-queue.repository';
import { PostingQueueService } from './posting-queue.service';

/**
 * The posting queue: weekly slots (the workspace's, an account's own) and the slots queued posts
 * take (posting_queue_schedules, posting_queue_slots). PostsService uses it to turn
 * `"queue": true` into a time; the page edits the slots and shows them on the calendar.
 */
@Module({
  imports: [AccountsModule, AuditModule],
  controllers: [PostingQueueController],
  providers: [PostingQueueRepository, PostingQueueService],
  exports: [PostingQueueService],
})
export class PostingQueueModule {}
