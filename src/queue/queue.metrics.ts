import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';
import { QueueRepository } from './queue.repository';

/**
 * The queue as operators watch it, read from the database at scrape time (so every process
 * reports the same numbers): jobs per waiting state, and how late the oldest due job is — the
 * first sign that workers cannot keep up or are not running at all.
 */
@Injectable()
export class QueueMetrics {
  constructor(metrics: MetricsService, queue: QueueRepository) {
    const registers = [metrics.registry];
    new Gauge({
      name: 'herald_queue_jobs',
      help: 'Jobs not finished, by state: due (scheduled, due now), later (scheduled ahead), in_progress (leased), paused',
      labelNames: ['state'],
      registers,
      async collect() {
        const counts = await queue.waitingCounts();
        for (const [state, n] of Object.entries(counts)) this.set({ state }, n);
      },
    });
    new Gauge({
      name: 'herald_queue_oldest_due_seconds',
      help: 'How long the oldest due job has been waiting (0 when none is due)',
      registers,
      async collect() {
        this.set(await queue.oldestDueSeconds());
      },
    });
  }
}
