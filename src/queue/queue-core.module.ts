import { Module } from '@nestjs/common';
import { JobLifecycle } from './job-lifecycle.service';
import { QueueNotifier } from './queue-notifier';
import { QueueMetrics } from './queue.metrics';
import { QueueRepository } from './queue.repository';

/**
 * The queue: the only writer of `jobs`. JobLifecycle is how the API's modules (accounts, posts,
 * jobs, dead-letter) change jobs; QueueRepository is the worker's side (rounds, leases, sweeps).
 */
@Module({
  providers: [QueueRepository, QueueNotifier, QueueMetrics, JobLifecycle],
  exports: [QueueRepository, QueueNotifier, JobLifecycle],
})
export class QueueCoreModule {}
