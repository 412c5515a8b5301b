import { Module } from '@nestjs/common';
import { QueueNotifier } from './queue-notifier';
import { QueueMetrics } from './queue.metrics';
import { QueueRepository } from './queue.repository';

/** The queue's SQL and wake-ups, shared by the API (posts, accounts) and the worker. */
@Module({
  providers: [QueueRepository, QueueNotifier, QueueMetrics],
  exports: [QueueRepository, QueueNotifier],
})
export class QueueCoreModule {}
