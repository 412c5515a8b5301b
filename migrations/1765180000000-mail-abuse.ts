import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Mail that cannot be abused (issue 18, the abuse list):
 *
 * - notification_recipients: one row per workspace and recipient address, owned by
 *   src/notifications. A recipient gets digests and alerts only once confirmed through a mailed,
 *   single-use, expiring link. The list itself stays in notification_settings.recipients (what
 *   the API returns); these rows say where each address stands.
 *   Addresses already configured when this runs are NOT trusted: they become pending, and the
 *   notifier sends each a confirmation (within the daily limit). Until someone confirms, alerts
 *   and digests go to nobody (the digest waits and then covers the whole time since). Safer than
 *   trusting lists that anyone with a key could have filled with strangers' addresses.
 * - mail_outbox: one more kind of mail, the recipient confirmation.
 * - account_events: two more outcomes, `capped_account` and `capped_workspace` (a daily alert limit was reached; no mail).
 */
export class MailAbuse1765180000000 implements MigrationInterface {
  name = 'MailAbuse1765180000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE notification_recipients (
        workspace_id          uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        -- As written in the list (mail goes to it as written)…
        address               text NOT NULL CHECK (length(address) BETWEEN 3 AND 254),
        -- …and lower-cased: one row per address and workspace, whatever its case.
        address_key           text GENERATED ALWAYS AS (lower(address)) STORED,
        -- False once removed from the list: the row stays so that removing and adding an address
        -- again does not mail it a new link more than once a day.
        listed                boolean NOT NULL DEFAULT true,
        confirmed_at          timestamptz,
        -- SHA-256 of the link's token while a link is out; cleared when used or the address is removed.
        token_hash            bytea UNIQUE,
        token_expires_at      timestamptz,
        -- When the last confirmation mail was written (at most one a day per address, and a
        -- limited number a day per workspace: src/notifications/recipient-confirmation.ts).
        confirmation_sent_at  timestamptz,
        created_at            timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, address_key),
        -- A link has an expiry, and a link out means a mail was written.
        CHECK ((token_hash IS NULL) = (token_expires_at IS NULL)),
        CHECK (token_hash IS NULL OR confirmation_sent_at IS NOT NULL),
        -- A confirmed address holds no live link; an unlisted one is neither confirmed nor linked.
        CHECK (confirmed_at IS NULL OR token_hash IS NULL),
        CHECK (listed OR (confirmed_at IS NULL AND token_hash IS NULL))
      )`);
    // The notifier's question each poll: which listed addresses wait for a confirmation mail.
    await q.query(
      `CREATE INDEX notification_recipients_unsent ON notification_recipients (workspace_id) WHERE listed AND confirmed_at IS NULL AND token_hash IS NULL`,
    );
    // Every address configured before: pending, a confirmation to be sent (see above).
    await q.query(`
      INSERT INTO notification_recipients (workspace_id, address)
      SELECT DISTINCT ON (s.workspace_id, lower(r.address)) s.workspace_id, r.address
      FROM notification_settings s CROSS JOIN LATERAL unnest(s.recipients) AS r(address)
      WHERE length(r.address) BETWEEN 3 AND 254
      ORDER BY s.workspace_id, lower(r.address)`);

    await q.query(`ALTER TABLE mail_outbox DROP CONSTRAINT mail_outbox_kind_check`);
    await q.query(
      `ALTER TABLE mail_outbox ADD CONSTRAINT mail_outbox_kind_check
       CHECK (kind IN ('digest', 'alert', 'invitation', 'password_reset', 'recipient_confirmation'))`,
    );

    // capped_account / capped_workspace: that daily alert limit was reached, so no mail.
    await q.query(`ALTER TABLE account_events DROP CONSTRAINT account_events_outcome_check`);
    await q.query(
      `ALTER TABLE account_events ADD CONSTRAINT account_events_outcome_check
       CHECK (outcome IN ('queued', 'no_recipients', 'alerts_off', 'resolved', 'capped_account', 'capped_workspace'))`,
    );
    // Counting the alerts mailed in the last 24 hours, per workspace and per account.
    await q.query(`CREATE INDEX account_events_mailed ON account_events (workspace_id, processed_at) WHERE outcome = 'queued'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX account_events_mailed`);
    await q.query(`UPDATE account_events SET outcome = 'alerts_off' WHERE outcome IN ('capped_account', 'capped_workspace')`);
    await q.query(`ALTER TABLE account_events DROP CONSTRAINT account_events_outcome_check`);
    await q.query(
      `ALTER TABLE account_events ADD CONSTRAINT account_events_outcome_check CHECK (outcome IN ('queued', 'no_recipients', 'alerts_off', 'resolved'))`,
    );
    await q.query(`DELETE FROM mail_outbox WHERE kind = 'recipient_confirmation'`);
    await q.query(`ALTER TABLE mail_outbox DROP CONSTRAINT mail_outbox_kind_check`);
    await q.query(
      `ALTER TABLE mail_outbox ADD CONSTRAINT mail_outbox_kind_check CHECK (kind IN ('digest', 'alert', 'invitation', 'password_reset'))`,
    );
    await q.query(`DROP TABLE notification_recipients`);
  }
}
