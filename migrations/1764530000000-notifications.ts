import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Mail: the notification settings of a workspace, the daily digests (one row per workspace and
 * local day: the exactly-once claim), the outbox of mails to send (digests and alerts, with the
 * outcome of their tries), and the outbox of account events that alerts are made from, written
 * by a trigger on `accounts` in the same transaction as the state change it reports.
 */
export class Notifications1764530000000 implements MigrationInterface {
  name = 'Notifications1764530000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE notification_settings (
        workspace_id      uuid PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
        digest_enabled    boolean NOT NULL DEFAULT false,
        recipients        text[] NOT NULL DEFAULT '{}',
        digest_hour       smallint NOT NULL DEFAULT 8 CHECK (digest_hour BETWEEN 0 AND 23),
        -- An IANA name, validated by the API (PostgreSQL's own zone list may differ from Node's).
        timezone          text NOT NULL DEFAULT 'UTC' CHECK (length(timezone) BETWEEN 1 AND 64),
        send_when_empty   boolean NOT NULL DEFAULT false,
        alerts_enabled    boolean NOT NULL DEFAULT true,
        -- When the digest was last switched on: a day whose hour had passed before that is not
        -- "missed" (no digest goes out the minute someone enables it in the afternoon).
        digest_enabled_at timestamptz,
        updated_at        timestamptz NOT NULL DEFAULT now(),
        -- SPEC §3: at most 20 recipients. An enabled digest with nobody to send it to would be
        -- silently lost every day.
        CHECK (cardinality(recipients) <= 20),
        CHECK (NOT digest_enabled OR (cardinality(recipients) > 0 AND digest_enabled_at IS NOT NULL))
      )`);

    await q.query(`
      CREATE TABLE mail_outbox (
        id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        workspace_id    uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        kind            text NOT NULL CHECK (kind IN ('digest', 'alert')),
        recipients      text[] NOT NULL CHECK (cardinality(recipients) BETWEEN 1 AND 20),
        subject         text NOT NULL,
        html            text NOT NULL,
        text            text NOT NULL,
        -- pending: waits for next_attempt_at; sending: a process holds it until lease_until (a
        -- process that died mid-conversation loses it to the next sweep); sent: the server
        -- accepted it; failed: refused for good (5xx) or out of tries.
        status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sending', 'sent', 'failed')),
        attempts        integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        lease_until     timestamptz,
        last_error      text,
        -- The server's answer when it accepted the message, and the recipients it refused while
        -- accepting the others.
        response        text,
        rejected        text[],
        sent_at         timestamptz,
        created_at      timestamptz NOT NULL DEFAULT now(),
        updated_at      timestamptz NOT NULL DEFAULT now(),
        CHECK ((status = 'sending') = (lease_until IS NOT NULL)),
        CHECK ((status = 'sent') = (sent_at IS NOT NULL))
      )`);
    // The sender's scan: mails due now, and leases of senders that died.
    await q.query(`CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at) WHERE status = 'pending'`);
    await q.query(`CREATE INDEX mail_outbox_leased ON mail_outbox (lease_until) WHERE status = 'sending'`);

    await q.query(`
      CREATE TABLE digests (
        id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        workspace_id        uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        -- The workspace's local day this digest is for. UNIQUE with the workspace: the claim is an
        -- INSERT … ON CONFLICT DO NOTHING, so however many processes tick, one row wins.
        local_date          date NOT NULL,
        timezone            text NOT NULL,
        digest_hour         smallint NOT NULL CHECK (digest_hour BETWEEN 0 AND 23),
        -- What it reports on: from the previous digest's window_end (24 h before for the first)
        -- to the moment it was made.
        window_start        timestamptz NOT NULL,
        window_end          timestamptz NOT NULL,
        -- queued: a mail was written to mail_outbox; empty: nothing to report and sendWhenEmpty off.
        outcome             text NOT NULL CHECK (outcome IN ('queued', 'empty')),
        mail_id             uuid REFERENCES mail_outbox(id),
        dead_jobs           integer NOT NULL CHECK (dead_jobs >= 0),
        failed_attempts     integer NOT NULL CHECK (failed_attempts >= 0),
        accounts_attention  integer NOT NULL CHECK (accounts_attention >= 0),
        created_at          timestamptz NOT NULL DEFAULT now(),
        UNIQUE (workspace_id, local_date),
        CHECK (window_end >= window_start),
        CHECK ((outcome = 'queued') = (mail_id IS NOT NULL))
      )`);

    // The digest's counts read attempts by finish time. Attempts are appended in about that
    // order, so a BRIN index (a few pages, next to nothing to maintain on the queue's hot insert)
    // turns "the last day's attempts" into a range scan instead of a scan of the whole history.
    await q.query(`CREATE INDEX attempts_finished_brin ON attempts USING brin (finished_at)`);

    /*
     * Alerts. The queue's round (and the accounts API) change an account's status and failure
     * count; the alert to send must be written in the SAME transaction, or a crash between the
     * two loses it or sends it twice. A trigger does that without the queue knowing about mail:
     * AFTER UPDATE on accounts, it inserts the event into account_events, which the notifier
     * reads (FOR UPDATE SKIP LOCKED), turns into a mail and marks processed in one transaction.
     *
     * One alert per incident: an event is written only on a transition (status becomes
     * needs_reauth / disabled, or the failure count crosses the warning level from below). The
     * count only ever grows by one per failure or drops to 0 (a success, a probe answered, the
     * account enabled again), so "crossing from below" is exactly "re-armed after a success".
     *
     * The warning level is half of CIRCUIT_DISABLE_THRESHOLD, a setting of the Herald process,
     * which PostgreSQL does not see. Each process writes its threshold into the one-row table
     * alert_thresholds when it starts (NotificationsModule), and the trigger reads it there: a
     * primary-key read, only on updates that change the status or the count. Hosts sharing a
     * database must share the setting (as they share HERALD_SECRET_KEY); the last one started
     * wins. Rejected: a trigger argument (fixed at migration time, blind to the setting), a
     * session variable (the queue's own pool would have to set it on every connection), a
     * database-level setting (needs ALTER DATABASE rights, and applies to new sessions only).
     *
     * "Disabled by the circuit breaker" is told apart from a person disabling the account by
     * the failure count: the queue disables an account exactly when the count reaches the
     * threshold; a person's PATCH leaves the count as it was (below the threshold).
     */
    await q.query(`
      CREATE TABLE alert_thresholds (
        -- One row: the primary key can only be true.
        singleton         boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        disable_threshold integer NOT NULL CHECK (disable_threshold >= 1),
        updated_at        timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`INSERT INTO alert_thresholds (disable_threshold) VALUES (50)`);

    await q.query(`
      CREATE TABLE account_events (
        id                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        account_id           uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        workspace_id         uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        kind                 text NOT NULL CHECK (kind IN ('needs_reauth', 'disabled', 'failure_warning', 'token_expiring')),
        -- What a person should read: the status reason, or the last error.
        detail               text,
        consecutive_failures integer NOT NULL,
        disable_threshold    integer,
        -- token_expiring only: the expiry this warns about. Unique per account below, so a
        -- token is warned about once; a new token (reconnected) gets its own warning.
        token_expires_at     timestamptz,
        created_at           timestamptz NOT NULL DEFAULT now(),
        processed_at         timestamptz,
        -- queued: a mail was written; no_recipients / alerts_off: the workspace asked for none;
        -- resolved: fixed before the notifier got to it (nothing left to say).
        outcome              text CHECK (outcome IN ('queued', 'no_recipients', 'alerts_off', 'resolved')),
        mail_id              uuid REFERENCES mail_outbox(id),
        CHECK ((processed_at IS NULL) = (outcome IS NULL)),
        CHECK ((outcome = 'queued') = (mail_id IS NOT NULL)),
        CHECK ((kind = 'token_expiring') = (token_expires_at IS NOT NULL))
      )`);
    await q.query(`CREATE INDEX account_events_pending ON account_events (id) WHERE processed_at IS NULL`);
    await q.query(
      `CREATE UNIQUE INDEX account_events_token ON account_events (account_id, token_expires_at) WHERE kind = 'token_expiring'`,
    );

    await q.query(`
      CREATE FUNCTION accounts_alert_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        threshold integer;
        warn_at   integer;
      BEGIN
        IF NEW.deleted_at IS NOT NULL THEN
          RETURN NULL;
        END IF;
        IF NEW.status = 'needs_reauth' AND OLD.status <> 'needs_reauth' THEN
          INSERT INTO account_events (account_id, workspace_id, kind, detail, consecutive_failures)
          VALUES (NEW.id, NEW.workspace_id, 'needs_reauth', NEW.status_reason, NEW.consecutive_failures);
          RETURN NULL;
        END IF;
        SELECT disable_threshold INTO threshold FROM alert_thresholds;
        threshold := coalesce(threshold, 50);
        IF NEW.status = 'disabled' AND OLD.status <> 'disabled' THEN
          IF NEW.consecutive_failures >= threshold THEN
            INSERT INTO account_events (account_id, workspace_id, kind, detail, consecutive_failures, disable_threshold)
            VALUES (NEW.id, NEW.workspace_id, 'disabled', coalesce(NEW.last_error, NEW.status_reason), NEW.consecutive_failures, threshold);
          END IF;
          RETURN NULL;
        END IF;
        -- Half the threshold, rounded up: "reaches half" of 5 is the 3rd failure.
        warn_at := (threshold + 1) / 2;
        IF NEW.status = 'active' AND OLD.consecutive_failures < warn_at
           AND NEW.consecutive_failures >= warn_at AND NEW.consecutive_failures < threshold THEN
          INSERT INTO account_events (account_id, workspace_id, kind, detail, consecutive_failures, disable_threshold)
          VALUES (NEW.id, NEW.workspace_id, 'failure_warning', NEW.last_error, NEW.consecutive_failures, threshold);
        END IF;
        RETURN NULL;
      END $$`);
    // Only updates that change the status or the count run the function at all.
    await q.query(`
      CREATE TRIGGER accounts_alert_outbox AFTER UPDATE OF status, consecutive_failures ON accounts
      FOR EACH ROW
      WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.consecutive_failures IS DISTINCT FROM NEW.consecutive_failures)
      EXECUTE FUNCTION accounts_alert_outbox()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER accounts_alert_outbox ON accounts`);
    await q.query(`DROP FUNCTION accounts_alert_outbox`);
    await q.query(`DROP TABLE account_events`);
    await q.query(`DROP TABLE alert_thresholds`);
    await q.query(`DROP INDEX attempts_finished_brin`);
    await q.query(`DROP TABLE digests`);
    await q.query(`DROP TABLE mail_outbox`);
    await q.query(`DROP TABLE notification_settings`);
  }
}
