import { Injectable } from '@nestjs/common';
import { Db, Sql } from '../database/db';

/** A workspace's notification settings as stored (defaults when it never saved any). */
export interface NotificationSettings {
  workspaceId: string;
  digestEnabled: boolean;
  recipients: string[];
  hour: number;
  timezone: string;
  sendWhenEmpty: boolean;
  alertsEnabled: boolean;
  /** When the digest was last switched on (null while it never was). */
  digestEnabledAt: Date | null;
}

export const DEFAULT_SETTINGS: Omit<NotificationSettings, 'workspaceId'> = {
  digestEnabled: false,
  recipients: [],
  hour: 8,
  timezone: 'UTC',
  sendWhenEmpty: false,
  alertsEnabled: true,
  digestEnabledAt: null,
};

const COLUMNS = `workspace_id AS "workspaceId", digest_enabled AS "digestEnabled", recipients, digest_hour AS hour, timezone,
  send_when_empty AS "sendWhenEmpty", alerts_enabled AS "alertsEnabled", digest_enabled_at AS "digestEnabledAt"`;

/** SQL of notification_settings: one row per workspace that saved its settings. */
@Injectable()
export class NotificationSettingsRepository {
  constructor(private readonly db: Db) {}

  async get(workspaceId: string, runner: Sql = this.db): Promise<NotificationSettings> {
    const rows = await runner.query<NotificationSettings>(`SELECT ${COLUMNS} FROM notification_settings WHERE workspace_id = $1`, [
      workspaceId,
    ]);
    return rows[0] ?? { workspaceId, ...DEFAULT_SETTINGS };
  }

  /**
   * Writes the settings. `digest_enabled_at` moves only when the digest goes from off to on
   * (decided here, against the stored row, so two concurrent saves cannot both "switch it on").
   */
  async save(s: Omit<NotificationSettings, 'digestEnabledAt'>, runner: Sql = this.db): Promise<NotificationSettings> {
    const rows = await runner.query<NotificationSettings>(
      `INSERT INTO notification_settings AS n (workspace_id, digest_enabled, recipients, digest_hour, timezone, send_when_empty,
                                               alerts_enabled, digest_enabled_at)
       VALUES ($1, $2, $3::text[], $4, $5, $6, $7, CASE WHEN $2 THEN now() END)
       ON CONFLICT (workspace_id) DO UPDATE SET
         digest_enabled = EXCLUDED.digest_enabled, recipients = EXCLUDED.recipients, digest_hour = EXCLUDED.digest_hour,
         timezone = EXCLUDED.timezone, send_when_empty = EXCLUDED.send_when_empty, alerts_enabled = EXCLUDED.alerts_enabled,
         digest_enabled_at = CASE WHEN EXCLUDED.digest_enabled AND NOT n.digest_enabled THEN now() ELSE n.digest_enabled_at END,
         updated_at = now()
       RETURNING ${COLUMNS}`,
      [s.workspaceId, s.digestEnabled, s.recipients, s.hour, s.timezone, s.sendWhenEmpty, s.alertsEnabled],
    );
    return rows[0];
  }

  /** Every workspace whose digest is on: the sweep's candidates (a handful of rows per workspace-minute). */
  digestEnabled(): Promise<NotificationSettings[]> {
    return this.db.query(`SELECT ${COLUMNS} FROM notification_settings WHERE digest_enabled`);
  }
}
