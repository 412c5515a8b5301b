import { Module } from '@nestjs/common';
import { QueueCoreModule } from '../queue/queue-core.module';
import { EventsService } from './events.service';

/** Herald's own events: written with the change they report, delivered as jobs of the queue (docs/events.md). */
@Module({
  imports: [QueueCoreModule],
  providers: [EventsService],
  exports: [EventsService],
})
export class EventsModule {}
