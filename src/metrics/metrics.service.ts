import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { CachedRead } from './cached-read';
import { EventLoopBlockingMonitor } from './event-loop-blocking';

/**
 * One registry per application instance (not prom-client's global one), so several apps in
 * one process (tests) do not collide. Other modules register their own metrics here.
 *
 * Labels stay bounded: route patterns (never raw paths), providers, states and reasons. No
 * workspace or account id is ever a label: their number grows with the tenants (every new id
 * is a new time series in Prometheus, forever), and whoever scrapes must not learn them. A
 * workspace sees its own accounts and dead jobs through the API.
 */
@Injectable()
export class MetricsService implements OnModuleDestroy {
  private readonly logger = new Logger('Metrics');
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: 'herald_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'herald_http_request_duration_seconds',
    help: 'HTTP request latency by method and route pattern',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  private readonly readErrors = new Counter({
    name: 'herald_metrics_read_errors_total',
    help: 'Gauges left out of a scrape because their database read failed, by source',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });

  private readonly blocking = new EventLoopBlockingMonitor();

  constructor(@Inject(HERALD_CONFIG) private readonly config: HeraldConfig) {
    // The event-loop lag histogram (herald_nodejs_eventloop_lag_*) times a libuv timer every
    // 100 ms instead of prom-client's default 10 ms, which woke an idle process 100 times a
    // second (an idle Herald: 0.35 → 0.20 % of a core, docs/benchmarks.md "Idle"). A stretch
    // blocked past one of its ticks still shows in the lag, less up to 100 ms;
    // herald_event_loop_blocked_max_seconds (below) keeps 10 ms ticks while the process works.
    collectDefaultMetrics({ register: this.registry, prefix: 'herald_', eventLoopMonitoringPrecision: 100 });
    const blocking = this.blocking;
    new Gauge({
      name: 'herald_event_loop_blocked_max_seconds',
      help: "Longest stretch the event loop was kept from its timers by the process's own work since the previous scrape (only the time the loop's thread ran counts: waiting for a CPU, the garbage collector's helper threads or the disk does not)",
      registers: [this.registry],
      collect() {
        this.set(blocking.take() / 1000);
      },
    });
    blocking.start();
  }

  onModuleDestroy(): void {
    this.blocking.stop();
  }

  /** Work starts (a request, a worker round): the event-loop monitor times it with fine ticks (event-loop-blocking.ts). */
  workStarted(): void {
    this.blocking.wake();
  }

  /**
   * A database read for gauges that scrapes share (see CachedRead): at most one read per
   * METRICS_DB_REFRESH_SECONDS per process. Resolves to null when the database does not answer,
   * so /metrics keeps serving the process's own metrics during an outage (when they matter
   * most) instead of failing as a whole; the gauge is then left out of that scrape.
   */
  databaseRead<T>(source: string, load: () => Promise<T>): () => Promise<T | null> {
    const cached = new CachedRead(load, this.config.metrics.databaseRefreshMs);
    return async () => {
      try {
        return await cached.get();
      } catch (err) {
        this.readErrors.inc({ source });
        this.logger.warn(`metrics: the ${source} read failed: ${(err as Error).message}`);
        return null;
      }
    };
  }

  metrics(): Promise<string> {
    return this.registry.metrics();
  }
}
