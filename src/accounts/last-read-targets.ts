import { LRUCache } from 'lru-cache';
import type { PostTargetAccount } from './accounts.repository';

/** Accounts remembered per process: enough for every account a busy instance posts to. */
const MAX_ACCOUNTS = 10_000;

/**
 * The intake's accounts as this process last read them (provider, status, config), by workspace
 * and id. Not a cache that answers: a guess that saves the accounts' read when it is right, and
 * costs nothing but a second try when it is wrong. The post's statement checks it (the accounts'
 * own piece, AccountsRepository.stillAsRead) and writes nothing unless every guessed account is
 * still there, still the workspace's, with the same provider, status and config; the posts
 * module then reads the accounts and decides again. So a stale entry can never put a post on a
 * deleted account, another workspace's, or one whose status or limits changed: it only sends the
 * request the long way. An account a read no longer finds is forgotten at once, so a deleted
 * one does not send every later request the long way. (A refused write is an error to
 * PostgreSQL: its log shows `null value in column "status" of relation "job_state"` with the
 * statement, once per stale guess; Herald logs nothing, it is the expected way to say no.)
 */
export class LastReadTargets {
  private readonly rows = new LRUCache<string, PostTargetAccount>({ max: MAX_ACCOUNTS });

  /** What a read of `ids` found (ids it did not find are forgotten). */
  remember(workspaceId: string, ids: readonly string[], found: readonly PostTargetAccount[]): void {
    const seen = new Set<string>();
    for (const row of found) {
      this.rows.set(keyOf(workspaceId, row.id), row);
      seen.add(row.id);
    }
    for (const id of ids) if (!seen.has(id.toLowerCase())) this.rows.delete(keyOf(workspaceId, id));
  }

  /** Every account of `ids` as last read, in their order; null when any was not read yet. */
  get(workspaceId: string, ids: readonly string[]): PostTargetAccount[] | null {
    const out: PostTargetAccount[] = [];
    for (const id of ids) {
      const row = this.rows.get(keyOf(workspaceId, id));
      if (!row) return null;
      out.push(row);
    }
    return out;
  }
}

const keyOf = (workspaceId: string, id: string) => `${workspaceId}/${id.toLowerCase()}`;
