import { Inject, Injectable, Logger } from '@nestjs/common';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { ListenConnection, ListenMode } from '../database/listen-connection';
import { ACCOUNT_STOPPED_CHANNEL, JOBS_CHANNEL } from '../queue/queue-notifier';

/**
 * One dedicated connection per process doing LISTEN on the queue's channels (ListenConnection:
 * it reconnects with backoff when the connection drops, and subscribes again). Once listening
 * again it wakes the worker once to catch up on what it missed; while it is down the worker
 * polls (maintenance-plan.ts).
 */
export type ListenerMode = ListenMode;

@Injectable()
export class QueueListener {
  private readonly logger = new Logger('QueueListener');
  private readonly connection: ListenConnection;
  private handler: (runAt: number) => void = () => undefined;
  private stoppedHandler: (accountId: string) => void = () => undefined;

  constructor(@Inject(HERALD_CONFIG) config: HeraldConfig) {
    this.connection = new ListenConnection({
      // LISTEN needs a session of its own: behind a transaction pooler, the direct URL.
      url: config.databaseDirectUrl ?? config.databaseUrl,
      role: 'listener',
      channels: [JOBS_CHANNEL, ACCOUNT_STOPPED_CHANNEL],
      notified: (channel, payload) => {
        if (channel === ACCOUNT_STOPPED_CHANNEL) {
          if (payload) this.stoppedHandler(payload);
          return;
        }
        const runAt = Number(payload);
        this.handler(Number.isFinite(runAt) ? runAt : 0);
      },
      listening: () => this.handler(0), // catch up on anything missed while not listening
      logger: this.logger,
    });
  }

  get state(): ListenerMode {
    return this.connection.state;
  }

  onWake(handler: (runAt: number) => void): void {
    this.handler = handler;
  }

  onAccountStopped(handler: (accountId: string) => void): void {
    this.stoppedHandler = handler;
  }

  start(): Promise<void> {
    return this.connection.start();
  }

  stop(): Promise<void> {
    return this.connection.stop();
  }
}
