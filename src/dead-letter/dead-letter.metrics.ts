import { Injectable } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { PROVIDERS } from '../connectors/connector.interface';
import { MetricsService } from '../metrics/metrics.service';
import { DEAD_REASONS } from './dead-letter.dto';
import { JobReads } from '../queue/job-reads.service';

/**
 * DLQ metrics, labelled by provider and dead reason only: 16 series whatever the number of
 * workspaces and accounts (an id per label value would grow Prometheus's series with every
 * tenant, and tell whoever scrapes who the tenants are). Per-account detail is the workspace's
 * own `GET /v1/dlq?accountId=`. The counters count what this process did (Prometheus sums
 * processes). The size is read from the database (every process reports the same, true number)
 * through a shared read reused for METRICS_DB_REFRESH_SECONDS, so scrapes do not each count the
 * dead jobs.
 */
@Injectable()
export class DeadLetterMetrics {
  readonly requeued: Counter<string>;
  readonly discarded: Counter<string>;
  readonly size: Gauge<'provider' | 'reason'>;

  constructor(metrics: MetricsService, reads: JobReads) {
    const registers = [metrics.registry];
    this.requeued = new Counter({
      name: 'herald_dlq_requeued_total',
      help: 'Dead jobs put back in the queue (single and bulk requeues)',
      registers,
    });
    this.discarded = new Counter({
      name: 'herald_dlq_discarded_total',
      help: 'Dead jobs discarded from the dead-letter queue',
      registers,
    });
    const read = metrics.databaseRead('dlq', () => reads.deadByProviderAndReason());
    this.size = new Gauge({
      name: 'herald_dlq_size',
      help: `Dead jobs waiting in the dead-letter queue, by provider and dead reason (read from the database, reused for up to METRICS_DB_REFRESH_SECONDS)`,
      labelNames: ['provider', 'reason'],
      registers,
      async collect() {
        const rows = await read();
        this.reset();
        if (rows === null) return; // left out of this scrape (counted in herald_metrics_read_errors_total)
        // Every combination is present, 0 included, so an alert on it has a series from the start.
        for (const provider of PROVIDERS) for (const reason of DEAD_REASONS) this.set({ provider, reason }, 0);
        for (const r of rows) this.set({ provider: r.provider, reason: r.reason }, r.n);
      },
    });
  }
}
