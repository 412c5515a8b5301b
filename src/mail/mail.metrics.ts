import { Injectable } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';
import { MAIL_KINDS, MailKind } from './mail-driver';
import { MailOutboxRepository } from './mail-outbox.repository';

/**
 * Mail metrics. The counters count what this process did (Prometheus sums processes); the
 * waiting mails are read from the database at each scrape, so every process reports the same,
 * true number (alert when it grows: the mail server is refusing or unreachable).
 */
@Injectable()
export class MailMetrics {
  readonly sent: Counter<'kind'>;
  readonly failed: Counter<'kind' | 'outcome'>;

  constructor(metrics: MetricsService, outbox: MailOutboxRepository) {
    const registers = [metrics.registry];
    this.sent = new Counter({
      name: 'herald_mails_sent_total',
      help: 'Mails the mail server accepted (or, without SMTP_URL, written to the outbox folder), by kind (digest, alert)',
      labelNames: ['kind'],
      registers,
    });
    this.failed = new Counter({
      name: 'herald_mails_failed_total',
      help: 'Failed tries to send a mail, by kind and outcome (retry: tried again later; gave_up: the mail failed for good)',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    // Every kind from the start, so a dashboard sees 0 rather than no series.
    for (const kind of MAIL_KINDS) {
      this.sent.inc({ kind }, 0);
      this.failed.inc({ kind, outcome: 'retry' }, 0);
      this.failed.inc({ kind, outcome: 'gave_up' }, 0);
    }
    // Shared by concurrent scrapes and reused for METRICS_DB_REFRESH_SECONDS (MetricsService.databaseRead).
    const waiting = metrics.databaseRead('mail_outbox', () => outbox.waiting());
    new Gauge({
      name: 'herald_mail_outbox',
      help: 'Mails not yet accepted by the mail server, by kind and state (pending, sending); read from the database at scrape time',
      labelNames: ['kind', 'state'],
      registers,
      async collect() {
        const rows = await waiting();
        this.reset();
        if (rows === null) return; // left out of this scrape (counted in herald_metrics_read_errors_total)
        for (const kind of MAIL_KINDS) for (const state of ['pending', 'sending']) this.set({ kind, state }, 0);
        for (const r of rows) this.set({ kind: r.kind, state: r.status }, r.n);
      },
    });
  }

  gaveUp(kind: MailKind): void {
    this.failed.inc({ kind, outcome: 'gave_up' });
  }
}
