import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * No live one-use link at rest (issue 28, defect 2). Invitation, password-reset and
 * recipient-confirmation mails were kept in mail_outbox in cleartext, after sending, forever: a
 * copy of the database (a backup, a replica, a read-only role) opened their links, although only
 * the SHA-256 of each token is stored elsewhere. From now on (src/mail/mail-seal.ts) their html
 * and text are sealed with HERALD_SECRET_KEY while they wait, and replaced by a short note in the
 * statement that records that they were sent or failed for good.
 *
 * What this does to the rows the version before left:
 * - sent or failed link mails: the bodies become the note (what is left of them is the outcome).
 * - link mails still waiting (pending, or sending for a process of the version before): they
 *   cannot be sealed here (a migration has no key), so they are withdrawn: failed, with a
 *   last_error that says so, their bodies the note. Normally none or a few (a mail waits seconds
 *   unless its server refuses it). A recipient whose confirmation is withdrawn gets its link
 *   cleared, so the notifier mails a fresh, sealed one at its next pass. A withdrawn invitation
 *   stays listed: the owner invites the address again to send a new link. A withdrawn reset is
 *   asked for again ("Forgot your password?" or the owner's button).
 */
const NOTE = `'(removed once sent: it held a one-use link)'`;
const LINK_KINDS = `('invitation', 'password_reset', 'recipient_confirmation')`;
/** SecretBox's stored form: v1.<96-bit IV>.<128-bit tag>.<ciphertext>, base64url without padding. */
const SEALED = `'^v1\\.[A-Za-z0-9_-]{16}\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]+$'`;

/** Withdraws the waiting link mails (`why` is their last_error) and clears the confirmation links they carried. */
async function withdrawWaiting(q: QueryRunner, why: string): Promise<void> {
  await q.query(
    `WITH withdrawn AS (
       UPDATE mail_outbox SET status = 'failed', lease_until = NULL, updated_at = now(), last_error = $1,
              html = ${NOTE}, text = ${NOTE}
       WHERE kind IN ${LINK_KINDS} AND status IN ('pending', 'sending')
       RETURNING workspace_id, kind, recipients)
     UPDATE notification_recipients r SET token_hash = NULL, token_expires_at = NULL, confirmation_sent_at = NULL
     FROM withdrawn w
     WHERE w.kind = 'recipient_confirmation' AND r.workspace_id = w.workspace_id AND r.address_key = lower(w.recipients[1])
       AND r.confirmed_at IS NULL AND r.token_hash IS NOT NULL`,
    [why],
  );
}

export class SealedMail1765800000000 implements MigrationInterface {
  name = 'SealedMail1765800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE mail_outbox SET html = ${NOTE}, text = ${NOTE} WHERE kind IN ${LINK_KINDS} AND status IN ('sent', 'failed')`);
    await withdrawWaiting(
      q,
      'withdrawn at the upgrade that seals link mails: it held a one-use link in cleartext (ask for a new link; recipient confirmations are sent again)',
    );
    // The rule in the database, so no bug (or a forgotten kind) can write a link in cleartext:
    // a mail with a one-use link holds a sealed body while it waits and the note once it is sent
    // or failed, never anything else.
    await q.query(`
      ALTER TABLE mail_outbox ADD CONSTRAINT mail_outbox_links_sealed CHECK (
        kind NOT IN ${LINK_KINDS} OR
        CASE WHEN status IN ('pending', 'sending') THEN html ~ ${SEALED} AND text ~ ${SEALED}
             ELSE html = ${NOTE} AND text = ${NOTE} END)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE mail_outbox DROP CONSTRAINT mail_outbox_links_sealed`);
    // The version before sends bodies as they are: sealed ones would go out as ciphertext.
    // Bodies already dropped stay dropped (nothing reads them back).
    await withdrawWaiting(q, 'withdrawn at the downgrade: its body was sealed, which the version before cannot open');
  }
}
