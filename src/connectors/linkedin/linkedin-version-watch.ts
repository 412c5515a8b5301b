import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { HERALD_CONFIG, HeraldConfig } from '../../config/config';
import { linkedInVersionNotice } from '../../config/linkedin-versions';

/**
 * Says in the log, at start and every day at 09:00 UTC, when LINKEDIN_VERSION is 60 days or
 * less from its sunset or past it (src/config/linkedin-versions.ts). The same words are on the
 * page (a banner for owners, every LinkedIn card), in the digest's "needs you" section and in
 * /health/ready's details. Silent otherwise.
 */
@Injectable()
export class LinkedInVersionWatch implements OnApplicationBootstrap {
  private readonly logger = new Logger('LinkedIn');

  constructor(@Inject(HERALD_CONFIG) private readonly config: HeraldConfig) {}

  onApplicationBootstrap(): void {
    this.check(new Date());
  }

  @Cron('0 0 9 * * *', { name: 'herald-linkedin-version', timeZone: 'UTC' })
  daily(): void {
    this.check(new Date());
  }

  /** Logs the warning for `now`, if any, and returns it. */
  check(now: Date): string | null {
    const notice = linkedInVersionNotice(this.config.linkedin.apiVersion, now);
    if (notice) this.logger.warn(notice.message);
    return notice?.message ?? null;
  }
}
