import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';

@Injectable()
export class WorkerMetrics {
  readonly deliveries: Counter<'provider' | 'class'>;
  readonly attemptSeconds: Histogram<'provider'>;
  readonly roundSeconds: Histogram<string>;
  readonly inFlight: Gauge<string>;

  constructor(private readonly metrics: MetricsService) {
    const registers = [metrics.registry];
    this.deliveries = new Counter({
      name: 'herald_delivery_attempts_total',
      help: 'Finished delivery attempts by provider and outcome class',
      labelNames: ['provider', 'class'],
      registers,
    });
    this.attemptSeconds = new Histogram({
      name: 'herald_delivery_attempt_duration_seconds',
      help: 'Duration of one delivery attempt (the platform call)',
      labelNames: ['provider'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.roundSeconds = new Histogram({
      name: 'herald_queue_round_duration_seconds',
      help: 'Duration of one worker round (record finished attempts + claim), one transaction',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
      registers,
    });
    this.inFlight = new Gauge({ name: 'herald_worker_in_flight', help: 'Attempts running in this process', registers });
  }

  /** A round starts: the event-loop monitor ticks finely while the worker works. */
  workStarted(): void {
    this.metrics.workStarted();
  }
}
