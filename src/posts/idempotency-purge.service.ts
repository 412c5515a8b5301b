import { Injectable, Logger } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { IdempotencyRepository } from './idempotency.repository';

/** Forgets Idempotency-Keys past their retention (hourly; any process may do it). */
@Injectable()
export class IdempotencyPurgeService {
  private readonly logger = new Logger('Idempotency');

  constructor(private readonly idempotency: IdempotencyRepository) {}

  @Interval(60 * 60 * 1000)
  async purge(): Promise<void> {
    try {
      const n = await this.idempotency.purgeExpired();
      if (n > 0) this.logger.log(`forgot ${n} expired idempotency keys`);
    } catch (err) {
      this.logger.error(`purging idempotency keys failed: ${String(err)}`);
    }
  }
}
