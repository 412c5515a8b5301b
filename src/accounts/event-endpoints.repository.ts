import { Injectable } from '@nestjs/common';
import { Db, Sql } from '../database/db';
import type { AccountRow } from './account.types';
import { ACCOUNT_COLUMNS as COLUMNS } from './accounts.repository';

/**
 * Reads of event endpoints: the accounts rows with `purpose = 'events'` (docs/events.md), scoped by
 * workspace, deleted ones left out. Their writes go through AccountStateService like any account's.
 */
@Injectable()
export class EventEndpointsRepository {
  constructor(private readonly db: Db) {}

  async find(workspaceId: string, id: string, m: Sql = this.db): Promise<AccountRow | null> {
    const rows: AccountRow[] = await m.query(
      `SELECT ${COLUMNS} FROM accounts WHERE workspace_id = $1 AND id = $2 AND deleted_at IS NULL AND purpose = 'events'`,
      [workspaceId, id],
    );
    return rows[0] ?? null;
  }

  /** Oldest first (the order they were added in); a workspace has few (at most MAX_EVENT_ENDPOINTS). */
  list(workspaceId: string): Promise<AccountRow[]> {
    return this.db.query(
      `SELECT ${COLUMNS} FROM accounts WHERE workspace_id = $1 AND deleted_at IS NULL AND purpose = 'events' ORDER BY created_at, id`,
      [workspaceId],
    );
  }

  async count(workspaceId: string, m: Sql = this.db): Promise<number> {
    const rows: { n: number }[] = await m.query(
      `SELECT count(*)::int AS n FROM accounts WHERE workspace_id = $1 AND deleted_at IS NULL AND purpose = 'events'`,
      [workspaceId],
    );
    return rows[0]?.n ?? 0;
  }
}
