import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * "Connect with Mastodon" (issue 31): Herald registers itself as an app on each instance a person
 * connects, the first time (`POST /api/v1/apps`), and keeps that registration for every later
 * connect to the same instance. mastodon_apps holds one registration per instance and redirect
 * URI (PUBLIC_URL + /settings/mastodon/callback: a Herald moved to a new address registers again,
 * since instances only send browsers back to a registered URI). Owned by src/connectors
 * (mastodon/oauth/mastodon-apps.repository.ts).
 *
 * The client secret is sealed with HERALD_SECRET_KEY (SecretBox: AES-256-GCM), bound to its row
 * and client id, like accounts.credentials: a ciphertext copied onto another row does not open.
 *
 * account_connect_states gets `flow`: what a platform needs back at its callback besides
 * Herald's state. Mastodon's callback names no instance (`?code&state`), so the flow remembers
 * which instance it went to, which registration sent the browser there and whether it used
 * PKCE. Never a secret: the PKCE verifier is derived again from the state (an HMAC under
 * HERALD_SECRET_KEY), and the client secret stays in mastodon_apps. A new account's name may now
 * be left to the platform (the account's display name, read at the callback), so the CHECK that
 * a flow names either its account or a new name goes.
 */
export class MastodonOAuth1765950000000 implements MigrationInterface {
  name = 'MastodonOAuth1765950000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE mastodon_apps (
        -- The instance's origin as normalizeInstanceUrl writes it: a scheme and a host, nothing more.
        instance_url       text NOT NULL CHECK (instance_url ~ '^https?://[^/?#@[:space:]]+$' AND length(instance_url) <= 2048),
        -- Where the instance sends browsers back; part of the registration, so part of the key.
        redirect_uri       text NOT NULL CHECK (redirect_uri ~ '^https?://[^[:space:]]+$' AND length(redirect_uri) <= 2048),
        -- The scopes it was registered with (space-separated): a Herald that asks for others registers again.
        scopes             text NOT NULL CHECK (scopes ~ '^[a-z:]+( [a-z:]+)*$' AND length(scopes) <= 500),
        client_id          text NOT NULL CHECK (client_id ~ '^[!-~]+$' AND length(client_id) <= 2000),
        -- Sealed (SecretBox's "v1.<iv>.<tag>.<ciphertext>"), never in clear.
        client_secret      text NOT NULL CHECK (client_secret LIKE 'v1.%' AND length(client_secret) <= 8000),
        -- From client_secret_expires_at (Mastodon 4.4+); NULL: the secret does not expire. Herald
        -- registers again before a flow would outlive it.
        secret_expires_at  timestamptz,
        registered_at      timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (instance_url, redirect_uri)
      )`);
    await q.query(`
      ALTER TABLE account_connect_states
        ADD COLUMN flow text CHECK (flow IS NULL OR length(flow) <= 4096)`);
    // A new account's name may be left to the platform (a Mastodon account's display name, read
    // when the flow completes): a connect without a name is no longer an impossible row. A
    // reconnect still names its account (account_id).
    await q.query(`ALTER TABLE account_connect_states DROP CONSTRAINT account_connect_states_check1`);
    await q.query(`
      COMMENT ON COLUMN account_connect_states.flow IS
        'What the platform needs back at its callback besides the state (Mastodon: instance, client id, PKCE used); never a secret'`);
  }

  async down(q: QueryRunner): Promise<void> {
    // Flows without a name cannot be kept under the old rule; they are a quarter of an hour long.
    await q.query(`DELETE FROM account_connect_states WHERE account_id IS NULL AND account_name IS NULL`);
    await q.query(`
      ALTER TABLE account_connect_states
        ADD CONSTRAINT account_connect_states_check1 CHECK (account_id IS NOT NULL OR account_name IS NOT NULL)`);
    await q.query(`ALTER TABLE account_connect_states DROP COLUMN flow`);
    await q.query(`DROP TABLE mastodon_apps`);
  }
}
