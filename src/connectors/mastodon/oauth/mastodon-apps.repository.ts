import { Injectable } from '@nestjs/common';
import { Db } from '../../../database/db';

/** A registration as stored: the client secret still sealed. */
export interface StoredApp {
  instanceUrl: string;
  redirectUri: string;
  scopes: string;
  clientId: string;
  sealedSecret: string;
  secretExpiresAt: Date | null;
}

const COLUMNS = `instance_url AS "instanceUrl", redirect_uri AS "redirectUri", scopes, client_id AS "clientId",
                 client_secret AS "sealedSecret", secret_expires_at AS "secretExpiresAt"`;

/**
 * SQL of mastodon_apps (migrations/1765950000000-mastodon-oauth.ts): Herald's registration on each
 * instance, one per instance and redirect URI. Secrets arrive sealed; this file never sees one in
 * clear. Registering is an HTTP call to the instance, made outside any statement here: two flows
 * that register the same instance at once each call the instance, and the statements below let
 * exactly one of them keep its registration.
 */
@Injectable()
export class MastodonAppsRepository {
  constructor(private readonly db: Db) {}

  async find(instanceUrl: string, redirectUri: string): Promise<StoredApp | null> {
    const rows = await this.db.query<StoredApp>(`SELECT ${COLUMNS} FROM mastodon_apps WHERE instance_url = $1 AND redirect_uri = $2`, [
      instanceUrl,
      redirectUri,
    ]);
    return rows[0] ?? null;
  }

  /** Keeps `app` when the instance has no registration yet: false when another flow's came first (its row stays). */
  async insertIfAbsent(app: StoredApp): Promise<boolean> {
    const rows = await this.db.query(
      `INSERT INTO mastodon_apps (instance_url, redirect_uri, scopes, client_id, client_secret, secret_expires_at)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (instance_url, redirect_uri) DO NOTHING
       RETURNING 1`,
      [app.instanceUrl, app.redirectUri, app.scopes, app.clientId, app.sealedSecret, app.secretExpiresAt],
    );
    return rows.length > 0;
  }

  /**
   * Replaces the registration whose client id is `replacedClientId` (its secret expired, or it
   * has other scopes) by `app`. Guarded by that client id: of two flows that both found it stale
   * and registered again, only the first replaces it; false for the second, which then uses the
   * first one's.
   */
  async replace(replacedClientId: string, app: StoredApp): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE mastodon_apps
          SET scopes = $3, client_id = $4, client_secret = $5, secret_expires_at = $6, registered_at = now()
        WHERE instance_url = $1 AND redirect_uri = $2 AND client_id = $7
       RETURNING 1`,
      [app.instanceUrl, app.redirectUri, app.scopes, app.clientId, app.sealedSecret, app.secretExpiresAt, replacedClientId],
    );
    return rows.length > 0;
  }
}
