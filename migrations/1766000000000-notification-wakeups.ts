import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Wake-ups for the notifier (issue 32, "Idle"): a NOTIFY on `herald_notifications` in the
 * transaction that writes to one of the notifier's inboxes, delivered at its commit (never for a
 * rollback), so the notifier sends at once instead of polling every 2 s
 * (notifications.scheduler.ts; the channel's name is NOTIFICATIONS_CHANNEL there).
 *
 * - account_events: the alert outbox, written by the trigger on accounts (the queue's round, the
 *   accounts API) and by the token scan;
 * - mail_outbox: every mail any module writes (invitations, approvals, digests, alerts);
 * - notification_recipients: addresses added to a list, or listed again (their confirmation mail is due).
 *
 * A trigger on each table rather than a statement in each writer: the tables' writers are in
 * several places (a trigger already writes account_events), and one more writer cannot forget
 * it. FOR EACH STATEMENT: one NOTIFY per statement whatever its rows (PostgreSQL also folds
 * equal NOTIFYs of one transaction into one); a statement that wrote nothing (ON CONFLICT DO
 * NOTHING) wakes the notifier for a pass that finds nothing, which costs a few reads.
 */
export class NotificationWakeups1766000000000 implements MigrationInterface {
  name = 'NotificationWakeups1766000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION notifications_wake() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('herald_notifications', TG_TABLE_NAME);
        RETURN NULL;
      END $$`);
    await q.query(
      `CREATE TRIGGER account_events_wake AFTER INSERT ON account_events FOR EACH STATEMENT EXECUTE FUNCTION notifications_wake()`,
    );
    await q.query(`CREATE TRIGGER mail_outbox_wake AFTER INSERT ON mail_outbox FOR EACH STATEMENT EXECUTE FUNCTION notifications_wake()`);
    // (An upsert that re-lists an address fires the INSERT statement trigger too.)
    await q.query(
      `CREATE TRIGGER notification_recipients_wake AFTER INSERT ON notification_recipients FOR EACH STATEMENT EXECUTE FUNCTION notifications_wake()`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER notification_recipients_wake ON notification_recipients`);
    await q.query(`DROP TRIGGER mail_outbox_wake ON mail_outbox`);
    await q.query(`DROP TRIGGER account_events_wake ON account_events`);
    await q.query(`DROP FUNCTION notifications_wake`);
  }
}
