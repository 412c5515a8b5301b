import type { DeliveryAccount } from '../connectors/connector.interface';

/** Accounts whose decrypted credentials one process keeps: enough for every account a busy worker serves at once. */
export const CREDENTIALS_CACHE_SIZE = 2_000;

/**
 * Decrypted credentials of the accounts this worker delivers for, so an attempt does not read
 * and decrypt them again. Bounded in memory:
 * - keyed by account and credentials version: a change (a person's save, a refreshed session)
 *   bumps the version, and the next claim carries the new one, so the entry is replaced;
 * - an account disabled or deleted is dropped at once (`forget`, on its account-stopped wake-up);
 * - credentials an attempt refreshed replace the entry's at the version they were refreshed from
 *   (`refreshed`), so the account's next jobs, already leased and waiting here, use them at once:
 *   the old session or token may be spent. The round that stores them bumps the version, and
 *   the next claim reads the stored ones again;
 * - at most `capacity` accounts, least recently used dropped first (Map order is insertion
 *   order; a hit re-inserts).
 */
export class CredentialsCache {
  private readonly entries = new Map<string, { version: number; account: DeliveryAccount }>();

  constructor(private readonly capacity = CREDENTIALS_CACHE_SIZE) {}

  /**
   * The account at this credentials version or a newer one (a person may have saved new
   * credentials between the claim and the read: they are the ones to use), or undefined.
   */
  get(accountId: string, atLeastVersion: number): { version: number; account: DeliveryAccount } | undefined {
    const hit = this.entries.get(accountId);
    if (!hit || hit.version < atLeastVersion) return undefined;
    this.entries.delete(accountId);
    this.entries.set(accountId, hit);
    return hit;
  }

  set(accountId: string, version: number, account: DeliveryAccount): void {
    this.entries.delete(accountId);
    this.entries.set(accountId, { version, account });
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  /**
   * An attempt that used `version` refreshed the account's credentials. Kept only while the entry
   * is still at that version: newer credentials (a person's save, read by a later claim) win.
   */
  refreshed(accountId: string, version: number, credentials: Record<string, unknown>): void {
    const hit = this.entries.get(accountId);
    if (!hit || hit.version !== version) return;
    this.entries.set(accountId, { version, account: { ...hit.account, credentials } });
  }

  forget(accountId: string): void {
    this.entries.delete(accountId);
  }

  get size(): number {
    return this.entries.size;
  }
}
