import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';
import { JobStore } from './job-store.service';

/**
 * The queue as operators watch it, read from the database at scrape time (so every process
 * reports the same numbers): jobs per waiting state, and how late the oldest due job is — the
 * first sign that workers cannot keep up or are not running at all. Both reads go through
 * MetricsService.databaseRead: shared by concurrent scrapes, reused for METRICS_DB_REFRESH_SECONDS.
 */
@Injectable()
export class QueueMetrics {
  constructor(metrics: MetricsService, queue: JobStore) {
    const registers = [metrics.registry];
    const counts = metrics.databaseRead('queue_jobs', () => queue.waitingCounts());
    const oldest = metrics.databaseRead('queue_oldest_due', () => queue.oldestDueSeconds());
    new Gauge({
      name: 'herald_queue_jobs',
      help: 'Jobs not finished, by state: due (scheduled, due now), later (scheduled ahead), in_progress (leased), paused',
      labelNames: ['state'],
      registers,
      async collect() {
        this.reset();
        for (const [state, n] of Object.entries((await counts()) ?? {})) this.set({ state }, n);
      },
    });
    new Gauge({
      name: 'herald_queue_oldest_due_seconds',
      help: 'How long the oldest due job has been waiting (0 when none is due)',
      registers,
      async collect() {
        this.reset();
        const seconds = await oldest();
        if (seconds !== null) this.set(seconds);
      },
    });
  }
}
