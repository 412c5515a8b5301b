import { Injectable } from '@nestjs/common';
import { Db } from '../database/db';
import type { Flash } from './session.types';

export interface SessionRow {
  id: string;
  workspaceId: string;
  /** Opened with an API key… */
  apiKeyId: string | null;
  /** …or by a person (exactly one of the two). */
  personId: string | null;
  csrfToken: string;
  flash: Flash | null;
  createdAt: Date;
  expiresAt: Date;
}

const SESSION_COLUMNS = `id, workspace_id AS "workspaceId", api_key_id AS "apiKeyId", person_id AS "personId", csrf_token AS "csrfToken", flash,
  created_at AS "createdAt", expires_at AS "expiresAt"`;

/**
 * SQL of page_sessions, the settings page's browser sessions (until migration 1765910000000
 * settings_sessions; the wrong-key counts are login-throttle.repository.ts's).
 */
@Injectable()
export class SessionsRepository {
  constructor(private readonly db: Db) {}

  async insert(input: {
    tokenHash: Buffer;
    workspaceId: string;
    apiKeyId: string | null;
    personId: string | null;
    csrfToken: string;
    expiresAt: Date;
  }): Promise<SessionRow> {
    const rows = await this.db.query<SessionRow>(
      `INSERT INTO page_sessions (token_hash, workspace_id, api_key_id, person_id, csrf_token, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${SESSION_COLUMNS}`,
      [input.tokenHash, input.workspaceId, input.apiKeyId, input.personId, input.csrfToken, input.expiresAt],
    );
    return rows[0];
  }

  /** The session with this token hash, unless it was revoked or has expired. */
  async findLive(tokenHash: Buffer): Promise<SessionRow | null> {
    const rows = await this.db.query<SessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM page_sessions
       WHERE token_hash = $1 AND revoked_at IS NULL AND expires_at > now()`,
      [tokenHash],
    );
    return rows[0] ?? null;
  }

  /** By id, live only (the LinkedIn callback finds the session that started the flow). */
  async findLiveById(id: string): Promise<SessionRow | null> {
    const rows = await this.db.query<SessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM page_sessions WHERE id = $1 AND revoked_at IS NULL AND expires_at > now()`,
      [id],
    );
    return rows[0] ?? null;
  }

  async extend(id: string, expiresAt: Date): Promise<void> {
    await this.db.query(`UPDATE page_sessions SET expires_at = $2, last_seen_at = now() WHERE id = $1 AND revoked_at IS NULL`, [
      id,
      expiresAt,
    ]);
  }

  async revoke(id: string): Promise<void> {
    await this.db.query(`UPDATE page_sessions SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL`, [id]);
  }

  /** Every live session opened with this API key ("log out everywhere"). Returns how many. */
  async revokeForKey(apiKeyId: string): Promise<number> {
    const rows = await this.db.query(
      `UPDATE page_sessions SET revoked_at = now() WHERE api_key_id = $1 AND revoked_at IS NULL RETURNING id`,
      [apiKeyId],
    );
    return rows.length;
  }

  /** Every live session of this person but `keepId` (a new password ends the others). Returns how many. */
  async revokeForPerson(personId: string, keepId: string | null = null): Promise<number> {
    const rows = await this.db.query(
      `UPDATE page_sessions SET revoked_at = now()
       WHERE person_id = $1 AND revoked_at IS NULL AND ($2::uuid IS NULL OR id <> $2) RETURNING id`,
      [personId, keepId],
    );
    return rows.length;
  }

  async setFlash(id: string, flash: Flash): Promise<void> {
    await this.db.query(`UPDATE page_sessions SET flash = $2 WHERE id = $1`, [id, flash]);
  }

  async clearFlash(id: string): Promise<void> {
    await this.db.query(`UPDATE page_sessions SET flash = NULL WHERE id = $1 AND flash IS NOT NULL`, [id]);
  }

  /** Sessions (and, by cascade, their OAuth states) that ended more than a day ago. */
  async purgeEnded(): Promise<void> {
    await this.db.query(`DELETE FROM page_sessions WHERE expires_at < now() - interval '1 day' OR revoked_at < now() - interval '1 day'`);
  }
}
