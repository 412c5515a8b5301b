import { Injectable } from '@nestjs/common';
import type { Sql, Tx } from '../database/db';
import type { AccountFeedback, AccountForRequeue, LockedAccount } from './account-state';
import { AccountStateRepository } from './account-state.repository';

/**
 * How other modules change an account's delivery state (status and circuit): the worker's rounds
 * (lock, feedback, probes) and the account API (disable, reactivate). Each method runs in the
 * caller's transaction, so the change commits with the jobs' change it belongs to.
 */
@Injectable()
export class AccountStateService {
  constructor(private readonly repo: AccountStateRepository) {}

  lockForRound(tx: Tx, ids: string[]): Promise<LockedAccount[]> {
    return this.repo.lockForRound(tx, ids);
  }

  applyFeedback(tx: Sql, decided: Map<string, AccountFeedback>): Promise<Set<string>> {
    return this.repo.applyFeedback(tx, decided);
  }

  startProbes(tx: Sql, accountIds: string[], leaseMs: number): Promise<Set<string>> {
    return this.repo.startProbes(tx, accountIds, leaseMs);
  }

  countSlowStartLeases(tx: Sql, leased: Map<string, number>): Promise<void> {
    return this.repo.countSlowStartLeases(tx, leased);
  }

  shareLock(m: Sql, ids: string[]): Promise<AccountForRequeue[]> {
    return this.repo.shareLock(m, ids);
  }

  reactivate(m: Sql, workspaceId: string, id: string): Promise<boolean> {
    return this.repo.reactivate(m, workspaceId, id);
  }

  disable(m: Sql, workspaceId: string, id: string, reason: string): Promise<boolean> {
    return this.repo.disable(m, workspaceId, id, reason);
  }
}
