import { Module } from '@nestjs/common';
import { JobLifecycle } from './job-lifecycle.service';
import { QueueNotifier } from './queue-notifier';
import { QueueMetrics } from './queue.metrics';
import { JobStore } from './job-store.service';

/**
 * The queue: the only writer of `jobs`. JobLifecycle is how the API's modules (accounts, posts,
 * jobs, dead-letter) change jobs; JobStore is the worker's side (rounds, leases, sweeps).
 */
@Module({
  providers: [JobStore, QueueNotifier, QueueMetrics, JobLifecycle],
  exports: [JobStore, QueueNotifier, JobLifecycle],
})
export class QueueCoreModule {}
