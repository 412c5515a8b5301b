import { Module } from '@nestjs/common';
import { JobLifecycle } from './job-lifecycle.service';
import { JobReads } from './job-reads.service';
import { QueueNotifier } from './queue-notifier';
import { QueueMetrics } from './queue.metrics';
import { JobStore } from './job-store.service';

/**
 * The queue: the only module with SQL on the jobs' tables (job_payloads, job_state, attempts and
 * the view `jobs`; every statement in ./sql). JobLifecycle is how the API's modules (accounts,
 * posts, jobs, dead-letter) change jobs; JobReads how they read them; JobStore is the worker's
 * side (rounds, leases, sweeps).
 */
@Module({
  providers: [JobStore, QueueNotifier, QueueMetrics, JobLifecycle, JobReads],
  exports: [JobStore, QueueNotifier, JobLifecycle, JobReads],
})
export class QueueCoreModule {}
