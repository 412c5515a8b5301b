import { Logger } from '@nestjs/common';
import { Client } from 'pg';
import { ConnectionRole, connectionOptions } from './connection-options';

/**
 * A connection of its own that LISTENs on some channels (a pooled connection cannot listen: it
 * is handed to other queries; behind a transaction pooler, give it the direct URL). It survives
 * the database: when the connection drops it reconnects with backoff (250 ms doubling to 10 s)
 * and subscribes again, then calls `listening` so its owner catches up on what it missed.
 *
 * Modes: `idle` → `connecting` → `listening` → (lost) `waiting` → `connecting` …; `stopped` at
 * shutdown, from any mode. A connection is given up exactly once, whatever mix of 'error' and
 * 'end' events it emits. The worker's QueueListener and the notifier each hold one.
 */
export type ListenMode = 'idle' | 'connecting' | 'listening' | 'waiting' | 'stopped';

export interface ListenOptions {
  url: string;
  /** Names the session in pg_stat_activity (connection-options.ts). */
  role: Extract<ConnectionRole, 'listener' | 'notifier'>;
  channels: string[];
  /** A NOTIFY on one of the channels. */
  notified: (channel: string, payload: string) => void;
  /** Subscribed (again): whatever was sent meanwhile was not heard. */
  listening: () => void;
  logger: Logger;
}

export class ListenConnection {
  private client: Client | null = null;
  private mode: ListenMode = 'idle';
  private retryMs = 250;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(private readonly options: ListenOptions) {}

  get state(): ListenMode {
    return this.mode;
  }

  async start(): Promise<void> {
    if (this.mode === 'stopped' || this.mode === 'connecting' || this.mode === 'listening') return;
    this.mode = 'connecting';
    const client = new Client(connectionOptions(this.options.url, this.options.role));
    this.client = client;
    let lost = false;
    const onLost = (why: string) => {
      if (lost) return;
      lost = true;
      void this.lose(client, why);
    };
    client.on('notification', (msg) => this.options.notified(msg.channel, msg.payload ?? ''));
    client.on('error', (err) => onLost(err.message));
    client.on('end', () => onLost('the connection closed'));
    try {
      await client.connect();
      for (const channel of this.options.channels) await client.query(`LISTEN ${channel}`);
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
    if (this.retryMs > 250) this.options.logger.log('listening again');
    this.mode = 'listening';
    this.retryMs = 250;
    this.options.listening();
  }

  private async lose(client: Client, why: string): Promise<void> {
    if (this.client === client) this.client = null;
    await client.end().catch(() => undefined);
    if (this.mode === 'stopped') return;
    this.options.logger.warn(`listen connection lost (${why}); reconnecting in ${this.retryMs} ms, polling meanwhile`);
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
