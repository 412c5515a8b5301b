import { Inject, Injectable, Logger } from '@nestjs/common';
import { Client } from 'pg';
import { connectionOptions } from '../database/connection-options';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { ACCOUNT_STOPPED_CHANNEL, JOBS_CHANNEL } from '../queue/queue-notifier';

/**
 * One dedicated connection per process doing LISTEN (a pooled connection cannot listen: it is
 * handed to other queries). It survives the database: when the connection drops (restart,
 * pg_terminate_backend, network), it reconnects with backoff (250 ms doubling to 10 s) and
 * subscribes again, then wakes the worker once to catch up on what it missed; the worker's
 * poll interval covers the gap.
 *
 * Modes: `connecting` → `listening` → (connection lost) `waiting` → `connecting` …; `stopped`
 * at shutdown, from any mode. A connection is given up exactly once, whatever mix of 'error'
 * and 'end' events it emits, so a drop never leads to two connections listening.
 */
export type ListenerMode = 'idle' | 'connecting' | 'listening' | 'waiting' | 'stopped';

@Injectable()
export class QueueListener {
  private readonly logger = new Logger('QueueListener');
  private client: Client | null = null;
  private mode: ListenerMode = 'idle';
  private handler: (runAt: number) => void = () => undefined;
  private stoppedHandler: (accountId: string) => void = () => undefined;
  private retryMs = 250;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(@Inject(HERALD_CONFIG) private readonly config: HeraldConfig) {}

  get state(): ListenerMode {
    return this.mode;
  }

  onWake(handler: (runAt: number) => void): void {
    this.handler = handler;
  }

  onAccountStopped(handler: (accountId: string) => void): void {
    this.stoppedHandler = handler;
  }

  async start(): Promise<void> {
    if (this.mode === 'stopped' || this.mode === 'connecting' || this.mode === 'listening') return;
    this.mode = 'connecting';
    // LISTEN needs a session of its own: behind a transaction pooler, the direct URL.
    const client = new Client(connectionOptions(this.config.databaseDirectUrl ?? this.config.databaseUrl, 'listener'));
    this.client = client;
    let lost = false;
    const onLost = (why: string) => {
      if (lost) return;
      lost = true;
      void this.lose(client, why);
    };
    client.on('notification', (msg) => {
      if (msg.channel === ACCOUNT_STOPPED_CHANNEL) {
        if (msg.payload) this.stoppedHandler(msg.payload);
        return;
      }
      const runAt = Number(msg.payload);
      this.handler(Number.isFinite(runAt) ? runAt : 0);
    });
    client.on('error', (err) => onLost(err.message));
    client.on('end', () => onLost('the connection closed'));
    try {
      await client.connect();
      await client.query(`LISTEN ${JOBS_CHANNEL}`);
      await client.query(`LISTEN ${ACCOUNT_STOPPED_CHANNEL}`);
    } catch (err) {
      onLost((err as Error).message);
      return;
    }
    if (lost) return;
    if (this.mode !== 'connecting') {
      // stop() was called while connecting.
      await client.end().catch(() => undefined);
      return;
    }
    if (this.retryMs > 250) this.logger.log('listening again for wake-ups');
    this.mode = 'listening';
    this.retryMs = 250;
    this.handler(0); // catch up on anything missed while not listening
  }

  private async lose(client: Client, why: string): Promise<void> {
    if (this.client === client) this.client = null;
    await client.end().catch(() => undefined);
    if (this.mode === 'stopped') return;
    this.logger.warn(`listen connection lost (${why}); reconnecting in ${this.retryMs} ms, polling meanwhile`);
    this.mode = 'waiting';
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, 10_000);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.start();
    }, wait);
    this.retryTimer.unref();
  }

  async stop(): Promise<void> {
    this.mode = 'stopped';
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const client = this.client;
    this.client = null;
    if (client) await client.end().catch(() => undefined);
  }
}
