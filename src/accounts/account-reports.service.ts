import { Injectable } from '@nestjs/common';
import type { Sql } from '../database/db';
import { AccountReportsRepository } from './account-reports.repository';
import type { AccountHealthRow } from './account.types';

/**
 * Accounts as the daily digest and the alerts report them (never their credentials). Each read
 * takes an optional runner so a caller can make it inside its own transaction.
 */
@Injectable()
export class AccountReportsService {
  constructor(private readonly reports: AccountReportsRepository) {}

  /** The workspace's live accounts, by name. */
  live(workspaceId: string, runner?: Sql): Promise<AccountHealthRow[]> {
    return this.reports.live(workspaceId, runner);
  }

  /** One account, deleted or not. */
  find(id: string, runner?: Sql): Promise<AccountHealthRow | null> {
    return this.reports.find(id, runner);
  }

  /** LinkedIn accounts whose token cannot be refreshed, with its expiry (the 7-day warning scan). */
  unrefreshableTokens(): Promise<{ id: string; workspaceId: string; tokenExpiresAt: string }[]> {
    return this.reports.unrefreshableTokens();
  }
}
