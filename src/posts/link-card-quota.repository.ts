import { Injectable } from '@nestjs/common';
import { Db } from '../database/db';
import type { LinkCardWindow } from './link-card-quota';

/**
 * SQL of link_card_fetches (settings_link_card_fetches until migration 1765910000000): each
 * person's count of link-card fetches in their current window (link-card-quota.ts decides). In PostgreSQL so that every Herald process counts into one
 * window per person.
 */
@Injectable()
export class LinkCardQuotaRepository {
  constructor(private readonly db: Db) {}

  /**
   * Counts one fetch for `principal` at `now` and returns its window as it stands after it: a
   * window that ended (opened at least `windowMs` before `now`) is replaced by one opened now.
   *
   * One statement, so two processes counting for one person at once cannot both read 19 and both
   * write 20: the second upsert waits for the first one's row lock and sees its count. (A read
   * then a write under SELECT … FOR UPDATE, as the login throttle does, would take a transaction
   * and three round trips for the same guarantee.) `now` comes from the caller, not now(), so a
   * test can put the fetches at chosen instants.
   */
  async count(principal: string, now: Date, windowMs: number): Promise<LinkCardWindow> {
    const rows = await this.db.prepared<LinkCardWindow>(
      'herald_link_card_count',
      `INSERT INTO link_card_fetches AS f (principal, window_opened_at, fetches) VALUES ($1, $2, 1)
       ON CONFLICT (principal) DO UPDATE SET
         window_opened_at = CASE WHEN f.window_opened_at <= $2::timestamptz - make_interval(secs => $3::float8 / 1000)
                                 THEN $2::timestamptz ELSE f.window_opened_at END,
         fetches = CASE WHEN f.window_opened_at <= $2::timestamptz - make_interval(secs => $3::float8 / 1000)
                        THEN 1 ELSE least(f.fetches + 1, 1000000) END
       RETURNING window_opened_at AS "openedAt", fetches`,
      [principal, now, windowMs],
    );
    return rows[0];
  }
}
