import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The team model (issue 18): people with roles who log in with a password, their one-use links
 * (invitations, password resets), roles on API keys, and one audit trail of every change.
 *
 * - api_keys: `admin`/`member` become owner/editor/viewer. Every existing key becomes `owner`
 *   (it could do everything before); the old `admin` key is flagged `bootstrap` (the operator's
 *   key, with instance-wide rights). `replaced_by` tells a bootstrap key retired by a new
 *   HERALD_API_KEY (it stays revoked) from one revoked through the API before that was refused
 *   (a start with the same HERALD_API_KEY restores it).
 * - people, invitations, password_resets: owned by src/people.
 * - settings_sessions: a session is opened either with an API key or by a person.
 * - audit_events: owned by src/audit; job_audit (the dead-letter queue's own trail) moves in.
 * - mail_outbox: two more kinds of mail, invitations and password resets.
 */
export class Team1764600000000 implements MigrationInterface {
  name = 'Team1764600000000';

  async up(q: QueryRunner): Promise<void> {
    // ---- API keys ----
    await q.query(`ALTER TABLE api_keys DROP CONSTRAINT api_keys_role_check`);
    await q.query(`ALTER TABLE api_keys ADD COLUMN bootstrap boolean NOT NULL DEFAULT false`);
    await q.query(`ALTER TABLE api_keys ADD COLUMN replaced_by uuid REFERENCES api_keys(id)`);
    await q.query(`UPDATE api_keys SET bootstrap = (role = 'admin'), role = 'owner'`);
    await q.query(`ALTER TABLE api_keys ADD CONSTRAINT api_keys_role_check CHECK (role IN ('owner', 'editor', 'viewer'))`);
    // The operator's key has every right of its workspace besides its own.
    await q.query(`ALTER TABLE api_keys ADD CONSTRAINT api_keys_bootstrap_owner CHECK (NOT bootstrap OR role = 'owner')`);
    // Only a revoked key can have been replaced.
    await q.query(`ALTER TABLE api_keys ADD CONSTRAINT api_keys_replaced_revoked CHECK (replaced_by IS NULL OR revoked_at IS NOT NULL)`);
    // A revoked bootstrap key with a newer bootstrap key beside it was rotated out by HERALD_API_KEY.
    await q.query(`
      UPDATE api_keys k SET replaced_by = (
        SELECT n.id FROM api_keys n
        WHERE n.workspace_id = k.workspace_id AND n.bootstrap AND n.created_at > k.created_at
        ORDER BY n.created_at LIMIT 1)
      WHERE k.bootstrap AND k.revoked_at IS NOT NULL`);

    // ---- people ----
    await q.query(`
      CREATE TABLE people (
        id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        workspace_id        uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        -- Lower-cased: the login address. One address is one person on an instance (below).
        email               text NOT NULL CHECK (email = lower(email) AND length(email) BETWEEN 3 AND 254 AND position('@' IN email) > 1),
        name                text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        role                text NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
        -- argon2id, PHC string format (algorithm, parameters, salt and hash in one string).
        password_hash       text NOT NULL CHECK (password_hash LIKE '$argon2id$%'),
        created_at          timestamptz NOT NULL DEFAULT now(),
        updated_at          timestamptz NOT NULL DEFAULT now(),
        -- Removed people are kept (the audit trail names them) but cannot log in; their
        -- sessions end at their next request.
        removed_at          timestamptz
      )`);
    // The login form asks for an address and a password only, so an address names one person.
    await q.query(`CREATE UNIQUE INDEX people_email ON people (email) WHERE removed_at IS NULL`);
    await q.query(`CREATE INDEX people_workspace ON people (workspace_id, created_at DESC, id DESC) WHERE removed_at IS NULL`);

    await q.query(`
      CREATE TABLE invitations (
        id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        workspace_id  uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        email         text NOT NULL CHECK (email = lower(email) AND length(email) BETWEEN 3 AND 254),
        role          text NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
        -- SHA-256 of the link's 256-bit token: a copy of this table opens nothing.
        token_hash    bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
        invited_by    text NOT NULL CHECK (length(invited_by) BETWEEN 1 AND 300),
        created_at    timestamptz NOT NULL DEFAULT now(),
        expires_at    timestamptz NOT NULL,
        accepted_at   timestamptz,
        person_id     uuid REFERENCES people(id) ON DELETE SET NULL,
        revoked_at    timestamptz,
        CHECK (expires_at > created_at),
        CHECK (accepted_at IS NULL OR revoked_at IS NULL)
      )`);
    // One open invitation per address and workspace: inviting again replaces the previous one.
    await q.query(
      `CREATE UNIQUE INDEX invitations_open ON invitations (workspace_id, email) WHERE accepted_at IS NULL AND revoked_at IS NULL`,
    );
    await q.query(`CREATE INDEX invitations_workspace ON invitations (workspace_id, created_at DESC, id DESC)`);

    await q.query(`
      CREATE TABLE password_resets (
        id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        person_id   uuid NOT NULL REFERENCES people(id) ON DELETE CASCADE,
        token_hash  bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
        created_at  timestamptz NOT NULL DEFAULT now(),
        expires_at  timestamptz NOT NULL,
        used_at     timestamptz,
        -- A newer link, or the person's removal, retires the older ones.
        revoked_at  timestamptz,
        CHECK (expires_at > created_at),
        CHECK (used_at IS NULL OR revoked_at IS NULL)
      )`);
    await q.query(`CREATE INDEX password_resets_person ON password_resets (person_id, created_at DESC)`);

    // ---- sessions of the page: a key's or a person's ----
    await q.query(`ALTER TABLE settings_sessions ALTER COLUMN api_key_id DROP NOT NULL`);
    await q.query(`ALTER TABLE settings_sessions ADD COLUMN person_id uuid REFERENCES people(id) ON DELETE CASCADE`);
    await q.query(
      `ALTER TABLE settings_sessions ADD CONSTRAINT settings_sessions_one_principal CHECK ((api_key_id IS NULL) <> (person_id IS NULL))`,
    );
    await q.query(`CREATE INDEX settings_sessions_person ON settings_sessions (person_id) WHERE revoked_at IS NULL`);

    // ---- mail ----
    await q.query(`ALTER TABLE mail_outbox DROP CONSTRAINT mail_outbox_kind_check`);
    await q.query(
      `ALTER TABLE mail_outbox ADD CONSTRAINT mail_outbox_kind_check CHECK (kind IN ('digest', 'alert', 'invitation', 'password_reset'))`,
    );

    // ---- the audit trail ----
    await q.query(`
      CREATE TABLE audit_events (
        id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        -- clock_timestamp(), not now(): several entries of one transaction keep their order.
        at           timestamptz NOT NULL DEFAULT clock_timestamp(),
        -- Who: a person, an API key, or Herald itself (system). No foreign key: people and keys
        -- are removed or revoked, never deleted, and the trail must outlive them anyway.
        actor_kind   text NOT NULL CHECK (actor_kind IN ('person', 'key', 'system')),
        actor_id     uuid,
        -- The actor's name as it was then ("Ada <ada@example.com>", "key “CI” (hk_3fZk)").
        actor_label  text NOT NULL CHECK (length(actor_label) BETWEEN 1 AND 400),
        kind         text NOT NULL CHECK (kind IN ('account', 'post', 'failed_post', 'person', 'invitation', 'api_key', 'notifications', 'media', 'workspace')),
        action       text NOT NULL CHECK (action ~ '^[a-z_]{1,40}$'),
        subject_id   uuid,
        -- One sentence for people (the page's Activity); never a secret.
        summary      text NOT NULL CHECK (length(summary) BETWEEN 1 AND 1000),
        -- What changed: the fields before and after (secrets only as "changed").
        before       jsonb,
        after        jsonb,
        CHECK (actor_kind = 'system' OR actor_id IS NOT NULL OR actor_label LIKE 'a removed %')
      )`);
    await q.query(`CREATE INDEX audit_events_workspace ON audit_events (workspace_id, at DESC, id DESC)`);
    await q.query(`CREATE INDEX audit_events_actor ON audit_events (workspace_id, actor_id, at DESC, id DESC)`);
    await q.query(`CREATE INDEX audit_events_subject ON audit_events (subject_id, at) WHERE subject_id IS NOT NULL`);
    // The trail is evidence: once written, never changed.
    await q.query(`CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events FOR EACH ROW EXECUTE FUNCTION attempts_immutable()`);
    await q.query(`
      INSERT INTO audit_events (workspace_id, at, actor_kind, actor_id, actor_label, kind, action, subject_id, summary, before, after)
      SELECT ja.workspace_id, ja.created_at, 'key', ja.api_key_id,
             coalesce('key “' || k.name || '” (' || k.prefix || ')', 'a removed key'),
             'failed_post', ja.action, ja.job_id,
             CASE ja.action WHEN 'edit' THEN 'Edited a failed post' WHEN 'requeue' THEN 'Requeued a failed post' ELSE 'Discarded a failed post' END,
             ja.before, ja.after
      FROM job_audit ja LEFT JOIN api_keys k ON k.id = ja.api_key_id`);
    await q.query(`DROP TABLE job_audit`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE job_audit (
        id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        job_id        uuid NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
        workspace_id  uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        api_key_id    uuid REFERENCES api_keys(id) ON DELETE SET NULL,
        action        text NOT NULL CHECK (action IN ('edit', 'requeue', 'discard')),
        before        jsonb NOT NULL,
        after         jsonb NOT NULL,
        created_at    timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX job_audit_job ON job_audit (job_id, id)`);
    await q.query(`CREATE TRIGGER job_audit_no_update BEFORE UPDATE ON job_audit FOR EACH ROW EXECUTE FUNCTION attempts_immutable()`);
    await q.query(`
      INSERT INTO job_audit (job_id, workspace_id, api_key_id, action, before, after, created_at)
      SELECT e.subject_id, e.workspace_id, k.id, e.action, coalesce(e.before, '{}'), coalesce(e.after, '{}'), e.at
      FROM audit_events e JOIN jobs j ON j.id = e.subject_id LEFT JOIN api_keys k ON k.id = e.actor_id AND e.actor_kind = 'key'
      WHERE e.kind = 'failed_post' AND e.action IN ('edit', 'requeue', 'discard')
      ORDER BY e.at`);
    await q.query(`DROP TABLE audit_events`);

    await q.query(`DELETE FROM mail_outbox WHERE kind IN ('invitation', 'password_reset')`);
    await q.query(`ALTER TABLE mail_outbox DROP CONSTRAINT mail_outbox_kind_check`);
    await q.query(`ALTER TABLE mail_outbox ADD CONSTRAINT mail_outbox_kind_check CHECK (kind IN ('digest', 'alert'))`);

    await q.query(`DELETE FROM settings_sessions WHERE person_id IS NOT NULL`);
    await q.query(`ALTER TABLE settings_sessions DROP CONSTRAINT settings_sessions_one_principal`);
    await q.query(`ALTER TABLE settings_sessions DROP COLUMN person_id`);
    await q.query(`ALTER TABLE settings_sessions ALTER COLUMN api_key_id SET NOT NULL`);

    await q.query(`DROP TABLE password_resets`);
    await q.query(`DROP TABLE invitations`);
    await q.query(`DROP TABLE people`);

    await q.query(`ALTER TABLE api_keys DROP CONSTRAINT api_keys_replaced_revoked`);
    await q.query(`ALTER TABLE api_keys DROP CONSTRAINT api_keys_bootstrap_owner`);
    await q.query(`ALTER TABLE api_keys DROP CONSTRAINT api_keys_role_check`);
    await q.query(`UPDATE api_keys SET role = CASE WHEN bootstrap THEN 'admin' ELSE 'member' END`);
    await q.query(`ALTER TABLE api_keys ADD CONSTRAINT api_keys_role_check CHECK (role IN ('admin', 'member'))`);
    await q.query(`ALTER TABLE api_keys DROP COLUMN replaced_by`);
    await q.query(`ALTER TABLE api_keys DROP COLUMN bootstrap`);
  }
}
