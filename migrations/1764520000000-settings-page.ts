import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The settings page's own state: browser sessions (server-side, so a person can log out and a
 * revoked API key ends them), the slow-down of repeated wrong keys at login, and the one-use
 * `state` values of the LinkedIn OAuth connect flow. Nothing here is read by the API or the
 * worker; every row is owned by src/settings.
 */
export class SettingsPage1764520000000 implements MigrationInterface {
  name = 'SettingsPage1764520000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE settings_sessions (
        id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        -- SHA-256 of the cookie's random token: a copy of this table does not let anyone in.
        token_hash    bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
        workspace_id  uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        -- The key the person logged in with: revoking it ends its sessions (checked per request),
        -- and it is the key the audit trail records for what they do on the page.
        api_key_id    uuid NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
        -- Synchronizer token every form of this session carries (CSRF).
        csrf_token    text NOT NULL CHECK (length(csrf_token) >= 32),
        -- One message for the next page (post/redirect/get). Never a secret: secrets shown once
        -- are rendered in the answer to the form that created them and stored nowhere.
        flash         jsonb,
        created_at    timestamptz NOT NULL DEFAULT now(),
        last_seen_at  timestamptz NOT NULL DEFAULT now(),
        -- Idle expiry, pushed forward while the person uses the page, never past the absolute
        -- limit the service applies from created_at.
        expires_at    timestamptz NOT NULL,
        revoked_at    timestamptz,
        CHECK (expires_at > created_at)
      )`);
    await q.query(`CREATE INDEX settings_sessions_expiry ON settings_sessions (expires_at)`);
    await q.query(`CREATE INDEX settings_sessions_api_key ON settings_sessions (api_key_id) WHERE revoked_at IS NULL`);

    // Wrong keys per client address. Kept in PostgreSQL so every Herald process sees the same
    // count (a second process is not a way around the slow-down).
    await q.query(`
      CREATE TABLE settings_login_throttle (
        client           text PRIMARY KEY CHECK (length(client) BETWEEN 1 AND 100),
        failures         integer NOT NULL DEFAULT 0 CHECK (failures >= 0),
        last_failure_at  timestamptz,
        -- No login is tried for this client before then (the key is not even looked at).
        blocked_until    timestamptz,
        CHECK (failures = 0 OR (last_failure_at IS NOT NULL AND blocked_until IS NOT NULL))
      )`);

    await q.query(`
      CREATE TABLE settings_oauth_states (
        -- SHA-256 of the state sent to LinkedIn (128+ random bits).
        state_hash        bytea PRIMARY KEY CHECK (length(state_hash) = 32),
        session_id        uuid NOT NULL REFERENCES settings_sessions(id) ON DELETE CASCADE,
        -- SHA-256 of a second random value kept in a short-lived cookie of the browser that
        -- started the flow: LinkedIn's redirect back is a cross-site navigation, on which the
        -- SameSite=Strict session cookie is not sent, so this is what ties the callback to it.
        browser_hash      bytea NOT NULL CHECK (length(browser_hash) = 32),
        -- Set for a reconnect: the LinkedIn account whose credentials the flow replaces.
        account_id        uuid REFERENCES accounts(id) ON DELETE CASCADE,
        account_name      text CHECK (account_name IS NULL OR length(account_name) BETWEEN 1 AND 200),
        requested_scopes  text NOT NULL,
        created_at        timestamptz NOT NULL DEFAULT now(),
        expires_at        timestamptz NOT NULL,
        -- Usable once: set by the callback that consumed it.
        used_at           timestamptz,
        CHECK (expires_at > created_at),
        CHECK (account_id IS NOT NULL OR account_name IS NOT NULL)
      )`);
    await q.query(`CREATE INDEX settings_oauth_states_expiry ON settings_oauth_states (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE settings_oauth_states`);
    await q.query(`DROP TABLE settings_login_throttle`);
    await q.query(`DROP TABLE settings_sessions`);
  }
}
