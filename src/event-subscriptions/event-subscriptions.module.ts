import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module';
import { DeadLetterModule } from '../dead-letter/dead-letter.module';
import { QueueCoreModule } from '../queue/queue-core.module';
import { EventSubscriptionsController } from './event-subscriptions.controller';
import { EventSubscriptionsService } from './event-subscriptions.service';

/** /v1/event-subscriptions: the workspace's event endpoints and their deliveries (docs/events.md). */
@Module({
  imports: [AccountsModule, DeadLetterModule, QueueCoreModule],
  controllers: [EventSubscriptionsController],
  providers: [EventSubscriptionsService],
  exports: [EventSubscriptionsService],
})
export class EventSubscriptionsModule {}
