import { Module } from '@nestjs/common';
import { ApprovalPolicyModule } from '../approval-policy/approval-policy.module';
import { AuditModule } from '../audit/audit.module';
import { AccountsModule } from '../accounts/accounts.module';
import { EventsModule } from '../events/events.module';
import { MediaModule } from '../media/media.module';
import { PostingQueueModule } from '../posting-queue/posting-queue.module';
import { QueueCoreModule } from '../queue/queue-core.module';
import { IdempotencyPurgeService } from './idempotency-purge.service';
import { IdempotencyRepository } from './idempotency.repository';
import { LinkCardQuotaRepository } from './link-card-quota.repository';
import { LinkCardService } from './link-card.service';
import { PostApprovals } from './post-approvals.service';
import { PostsBatchController } from './posts-batch.controller';
import { PostsBatchService } from './posts-batch.service';
import { PostsController } from './posts.controller';
import { PostsRepository } from './posts.repository';
import { PostsService } from './posts.service';

@Module({
  imports: [AccountsModule, ApprovalPolicyModule, AuditModule, EventsModule, MediaModule, PostingQueueModule, QueueCoreModule],
  controllers: [PostsBatchController, PostsController],
  providers: [
    PostApprovals,
    PostsRepository,
    IdempotencyRepository,
    PostsService,
    PostsBatchService,
    IdempotencyPurgeService,
    LinkCardQuotaRepository,
    LinkCardService,
  ],
  exports: [PostsService, PostsBatchService, PostApprovals, LinkCardService],
})
export class PostsModule {}
