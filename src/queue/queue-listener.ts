import { Inject, Injectable, Logger } from '@nestjs/common';
import { Client } from 'pg';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { ACCOUNT_STOPPED_CHANNEL, JOBS_CHANNEL } from './queue-notifier';

/**
 * One dedicated connection per process doing LISTEN herald_jobs (a pooled connection cannot
 * listen: it is handed to other queries). Reconnects with backoff if the connection drops;
 * the worker's poll interval covers the gap.
 */
@Injectable()
export class QueueListener {
  private readonly logger = new Logger('QueueListener');
  private client: Client | null = null;
  private handler: (runAt: number) => void = () => undefined;
  private stoppedHandler: (accountId: string) => void = () => undefined;
  private stopped = false;
  private retryMs = 250;

  constructor(@Inject(HERALD_CONFIG) private readonly config: HeraldConfig) {}

  onWake(handler: (runAt: number) => void): void {
    this.handler = handler;
  }

  onAccountStopped(handler: (accountId: string) => void): void {
    this.stoppedHandler = handler;
  }

  async start(): Promise<void> {
    if (this.stopped) return;
    const client = new Client({ connectionString: this.config.databaseUrl, application_name: 'herald-listener' });
    client.on('notification', (msg) => {
      if (msg.channel === ACCOUNT_STOPPED_CHANNEL) {
        if (msg.payload) this.stoppedHandler(msg.payload);
        return;
      }
      const runAt = Number(msg.payload);
      this.handler(Number.isFinite(runAt) ? runAt : 0);
    });
    client.on('error', (err) => {
      this.logger.warn(`listen connection lost: ${err.message}`);
      void this.reconnect(client);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${JOBS_CHANNEL}`);
      await client.query(`LISTEN ${ACCOUNT_STOPPED_CHANNEL}`);
      this.client = client;
      this.retryMs = 250;
      if (this.stopped) await this.stop();
      else this.handler(0); // catch up on anything missed while not listening
    } catch (err) {
      this.logger.warn(`could not LISTEN (${(err as Error).message}); polling until it works`);
      await this.reconnect(client);
    }
  }

  private async reconnect(old: Client): Promise<void> {
    if (this.client === old) this.client = null;
    await old.end().catch(() => undefined);
    if (this.stopped) return;
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, 10_000);
    setTimeout(() => void this.start(), wait).unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const client = this.client;
    this.client = null;
    if (client) await client.end().catch(() => undefined);
  }
}
