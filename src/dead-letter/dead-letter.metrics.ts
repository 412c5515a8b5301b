import { Injectable } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';
import { DeadLetterRepository } from './dead-letter.repository';

/**
 * DLQ metrics. The counters count what this process did (Prometheus sums processes); the size
 * is read from the database at each scrape, so every process reports the same, true number.
 */
@Injectable()
export class DeadLetterMetrics {
  readonly requeued: Counter<'account'>;
  readonly discarded: Counter<'account'>;
  readonly size: Gauge<'account' | 'workspace' | 'provider'>;

  constructor(metrics: MetricsService, repository: DeadLetterRepository) {
    const registers = [metrics.registry];
    this.requeued = new Counter({
      name: 'herald_dlq_requeued_total',
      help: 'Dead jobs put back in the queue (single and bulk requeues), by account',
      labelNames: ['account'],
      registers,
    });
    this.discarded = new Counter({
      name: 'herald_dlq_discarded_total',
      help: 'Dead jobs discarded from the dead-letter queue, by account',
      labelNames: ['account'],
      registers,
    });
    this.size = new Gauge({
      name: 'herald_dlq_size',
      help: 'Dead jobs waiting in the dead-letter queue, by account (read from the database at scrape time)',
      labelNames: ['account', 'workspace', 'provider'],
      registers,
      async collect() {
        const rows = await repository.deadByAccount();
        // An account whose queue emptied must drop to nothing, not keep its last value.
        this.reset();
        for (const r of rows) this.set({ account: r.accountId, workspace: r.workspaceId, provider: r.provider }, r.n);
      },
    });
  }
}
