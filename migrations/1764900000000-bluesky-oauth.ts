import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Bluesky OAuth ("Connect with Bluesky", src/connectors/bluesky/oauth/): the tables behind
 * `@atproto/oauth-client-node`'s stores, owned by that folder's repository and nothing else.
 * Every secret in them (the client's private key, DPoP keys, PKCE verifiers, tokens) is sealed
 * with HERALD_SECRET_KEY (AES-256-GCM, src/common/crypto) with its row's key as authenticated
 * context, like accounts.credentials: a ciphertext copied onto another row does not open there.
 */
export class BlueskyOAuth1764900000000 implements MigrationInterface {
  name = 'BlueskyOAuth1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE bluesky_oauth_keys (
        -- One key: Herald signs its client assertions (private_key_jwt) with it and publishes its
        -- public half at PUBLIC_URL/oauth/bluesky/jwks.json. One row, so every process that shares
        -- the database signs with the same key (generated once by whichever process starts first).
        id           smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
        kid          text NOT NULL CHECK (length(kid) BETWEEN 1 AND 100),
        private_jwk  text NOT NULL,
        created_at   timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE bluesky_oauth_states (
        -- SHA-256 of the library's \`state\` parameter (it travels in the browser's URL).
        state_hash  bytea PRIMARY KEY CHECK (length(state_hash) = 32),
        -- Sealed: the flow's DPoP private key, the PKCE verifier, the issuer, Herald's own state.
        data        text NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now(),
        -- A person has this long to finish at the authorization server; older rows are deleted.
        expires_at  timestamptz NOT NULL CHECK (expires_at > created_at)
      )`);
    await q.query(`CREATE INDEX bluesky_oauth_states_expiry ON bluesky_oauth_states (expires_at)`);
    await q.query(`
      CREATE TABLE bluesky_oauth_sessions (
        -- Named in the account's (sealed) credentials; one per connected account, so the same
        -- Bluesky account connected in two workspaces has two sessions that never mix.
        id          uuid PRIMARY KEY,
        did         text NOT NULL CHECK (did LIKE 'did:%' AND length(did) <= 2048),
        -- Sealed: the DPoP key, the token set (access and refresh tokens), the auth method.
        session     text NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now(),
        updated_at  timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE bluesky_oauth_locks (
        -- The library's request lock (one token refresh at a time per session, whatever the number
        -- of Herald processes), as a lease: no connection or transaction is held across the
        -- refresh's HTTP calls, and it works behind a pooler in transaction mode. A holder that
        -- dies loses the lock when its lease ends.
        name        text PRIMARY KEY CHECK (length(name) <= 300),
        holder      uuid NOT NULL,
        expires_at  timestamptz NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE bluesky_oauth_locks`);
    await q.query(`DROP TABLE bluesky_oauth_sessions`);
    await q.query(`DROP TABLE bluesky_oauth_states`);
    await q.query(`DROP TABLE bluesky_oauth_keys`);
  }
}
