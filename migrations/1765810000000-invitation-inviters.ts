import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Invitations name who made them, and a first person waits for their address to be proven
 * (issue 28, defects 6 and 8).
 *
 * - inviter_kind, inviter_id: the person or API key that invited. An invitation is only as good
 *   as its inviter's right to grant its role: at acceptance (and when its page opens) Herald
 *   checks that the inviter is still active and still may grant the role (roles.ts mayGrant), and
 *   the link answers as withdrawn otherwise. Only a label (`invited_by`) was kept before.
 *
 *   Invitations made before this migration: their inviter is read from the audit trail, which
 *   has recorded every invitation with who made it (kind 'invitation', action 'create', the
 *   invitation as subject) since invitations exist. An open invitation whose inviter is not found
 *   there (a row written by hand, or a trail cut short) is withdrawn, with an entry in the trail
 *   by Herald itself: whether its inviter may still grant its role cannot be known, and honouring
 *   it could let a removed owner's link still make an owner. Its workspace's owners see it
 *   withdrawn and can invite again. Accepted and withdrawn rows keep no inviter when none is found.
 *
 * - first_person, person_name, password_hash: a workspace's first person, made with an owner key
 *   (POST /v1/people, the Team page), no longer becomes a login at once. Herald writes an owner
 *   invitation holding the name and the argon2id hash of the password the key holder chose, and
 *   mails its link to the address (without a mail server, the answer carries it); the person
 *   exists once the link is used, so an address becomes a login only when its mailbox is proven.
 *   The one exception, the very first person of a server without mail, is never an invitation.
 *   A pending first person is an invitation like any other: it holds no address (people_email
 *   stays the one rule of one login per address), so another workspace may invite that address.
 *
 * Down drops the columns: open first-person invitations then ask for a name and password like any
 * other invitation, and the withdrawn ones stay withdrawn.
 */
export class InvitationInviters1765810000000 implements MigrationInterface {
  name = 'InvitationInviters1765810000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE invitations ADD COLUMN inviter_kind text CHECK (inviter_kind IN ('person', 'key'))`);
    // No foreign key, as in audit_events: people are removed and keys revoked, never deleted, and
    // an api_keys or people id is told apart by inviter_kind.
    await q.query(`ALTER TABLE invitations ADD COLUMN inviter_id uuid`);
    // Both or neither: an id without its kind names nobody.
    await q.query(`ALTER TABLE invitations ADD CONSTRAINT invitations_inviter_whole CHECK ((inviter_kind IS NULL) = (inviter_id IS NULL))`);
    await q.query(`
      UPDATE invitations i SET inviter_kind = e.actor_kind, inviter_id = e.actor_id
      FROM audit_events e
      WHERE e.kind = 'invitation' AND e.action = 'create' AND e.subject_id = i.id
        AND e.actor_kind IN ('person', 'key') AND e.actor_id IS NOT NULL`);
    await q.query(`
      WITH withdrawn AS (
        UPDATE invitations SET revoked_at = now()
        WHERE inviter_id IS NULL AND accepted_at IS NULL AND revoked_at IS NULL
        RETURNING id, workspace_id, email)
      INSERT INTO audit_events (workspace_id, actor_kind, actor_id, actor_label, kind, action, subject_id, summary, before, after)
      SELECT workspace_id, 'system', NULL, 'Herald', 'invitation', 'revoke', id,
             'Withdrew the invitation of ' || email || ' at an upgrade: who made it is not on record, so whether they may still grant its role cannot be checked',
             '{"status": "pending"}', '{"status": "revoked"}'
      FROM withdrawn`);
    // An open link always names its inviter: acceptance checks their rights.
    await q.query(
      `ALTER TABLE invitations ADD CONSTRAINT invitations_open_inviter CHECK (inviter_id IS NOT NULL OR accepted_at IS NOT NULL OR revoked_at IS NOT NULL)`,
    );

    await q.query(`ALTER TABLE invitations ADD COLUMN first_person boolean NOT NULL DEFAULT false`);
    await q.query(`ALTER TABLE invitations ADD COLUMN person_name text CHECK (length(person_name) BETWEEN 1 AND 200)`);
    await q.query(`ALTER TABLE invitations ADD COLUMN password_hash text CHECK (password_hash LIKE '$argon2id$%')`);
    // A workspace's first person is an owner, and comes with the name the key holder gave.
    await q.query(
      `ALTER TABLE invitations ADD CONSTRAINT invitations_first_person CHECK (NOT first_person OR (role = 'owner' AND person_name IS NOT NULL))`,
    );
    // Other invitations let the invitee choose their name and password on the page.
    await q.query(`ALTER TABLE invitations ADD CONSTRAINT invitations_chosen_by_invitee CHECK (first_person OR person_name IS NULL)`);
    // The hash waits only while the link is open: once used (it is the person's now) or withdrawn,
    // no stale copy of a password hash stays behind.
    await q.query(
      `ALTER TABLE invitations ADD CONSTRAINT invitations_hash_while_open CHECK ((password_hash IS NOT NULL) = (first_person AND accepted_at IS NULL AND revoked_at IS NULL))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE invitations DROP CONSTRAINT invitations_hash_while_open`);
    await q.query(`ALTER TABLE invitations DROP CONSTRAINT invitations_chosen_by_invitee`);
    await q.query(`ALTER TABLE invitations DROP CONSTRAINT invitations_first_person`);
    await q.query(`ALTER TABLE invitations DROP COLUMN password_hash`);
    await q.query(`ALTER TABLE invitations DROP COLUMN person_name`);
    await q.query(`ALTER TABLE invitations DROP COLUMN first_person`);
    await q.query(`ALTER TABLE invitations DROP CONSTRAINT invitations_open_inviter`);
    await q.query(`ALTER TABLE invitations DROP CONSTRAINT invitations_inviter_whole`);
    await q.query(`ALTER TABLE invitations DROP COLUMN inviter_id`);
    await q.query(`ALTER TABLE invitations DROP COLUMN inviter_kind`);
  }
}
