import { Injectable } from '@nestjs/common';
import type { Sql, Tx } from '../database/db';
import type { AccountFeedback, AccountForRequeue, LockedAccount } from './account-state';
import { AccountChanges, AccountRowRepository, NewAccountRow } from './account-row.repository';
import { AccountStateRepository } from './account-state.repository';

export type { AccountChanges, NewAccountRow } from './account-row.repository';

/**
 * How other modules write an account (this module is the accounts table's one writer:
 * architecture.json "tables"): its delivery state (status and circuit) for the worker's rounds
 * (lock, feedback, probes, refreshed credentials) and the account API (disable, reactivate), and
 * the rest of its row for the accounts module (create, edit, soft delete). Each method runs in
 * the caller's transaction, so the change commits with the jobs' change it belongs to.
 */
@Injectable()
export class AccountStateService {
  constructor(
    private readonly repo: AccountStateRepository,
    private readonly rows: AccountRowRepository,
  ) {}

  /** A new account (the accounts module sealed its credentials and chose its settings). */
  create(m: Sql, row: NewAccountRow): Promise<void> {
    return this.rows.insert(row, m);
  }

  /** A person's edit of the account's own columns (AccountsService decides it). */
  edit(m: Sql, workspaceId: string, id: string, changes: AccountChanges): Promise<void> {
    return this.rows.update(m, workspaceId, id, changes);
  }

  /** Credentials attempts refreshed, stored in a worker round's transaction unless a person saved newer ones. */
  storeRefreshedCredentials(tx: Sql, updates: { accountId: string; sealed: string; basedOnVersion: number }[]): Promise<Set<string>> {
    return this.rows.storeRefreshedCredentials(tx, updates);
  }

  /** Soft delete; false when unknown. The caller cancelled its jobs first. */
  softDelete(m: Sql, workspaceId: string, id: string): Promise<boolean> {
    return this.rows.softDelete(m, workspaceId, id);
  }

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
