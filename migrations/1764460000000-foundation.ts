import { MigrationInterface, QueryRunner } from 'typeorm';

/** Workspaces (tenants) and their API keys. */
export class Foundation1764460000000 implements MigrationInterface {
  name = 'Foundation1764460000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE workspaces (
        id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        -- The workspace that HERALD_API_KEY (or the key printed at first start) belongs to.
        is_bootstrap boolean NOT NULL DEFAULT false,
        created_at  timestamptz NOT NULL DEFAULT now()
      )`);
    // At most one bootstrap workspace, even when several processes start at once.
    await q.query(`CREATE UNIQUE INDEX workspaces_one_bootstrap ON workspaces (is_bootstrap) WHERE is_bootstrap`);
    await q.query(`
      CREATE TABLE api_keys (
        id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        name         text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        -- SHA-256 of the key. Keys are 256-bit random values, so a fast hash is enough;
        -- the plain key is shown once and never stored.
        key_hash     bytea NOT NULL UNIQUE CHECK (length(key_hash) = 32),
        -- First characters of the key, to tell keys apart in lists. Not enough to guess it.
        prefix       text NOT NULL,
        role         text NOT NULL CHECK (role IN ('admin', 'member')),
        created_at   timestamptz NOT NULL DEFAULT now(),
        revoked_at   timestamptz
      )`);
    await q.query(`CREATE INDEX api_keys_workspace ON api_keys (workspace_id, created_at DESC, id DESC) WHERE revoked_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE api_keys`);
    await q.query(`DROP TABLE workspaces`);
  }
}
