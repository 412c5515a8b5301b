import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Approvals (docs/api.md "Approvals"): a workspace may require an owner's approval before a post
 * is published.
 * - posts.approval: `pending` (the post waits for an owner's decision) or `expired` (approved
 *   after its deadline: a terminal state, nothing is published). Such a post has no jobs, like a
 *   draft: the accounts it will go to stay in `draft_targets` until approval writes its jobs
 *   (and clears both columns) in one statement. Unlike a draft, it may keep the time and the
 *   deadline it was asked for (no time: it goes out when approved).
 * - approval_settings: the workspace's choice (`off` when it has no row).
 * - approval_steps: every step of a post's approval (submitted, approved, rejected, expired,
 *   resubmitted by an edit), who took it and the comment: GET /v1/posts/{id}/approvals. A
 *   reviewer (someone with a client review link, no account) is named as they gave their name.
 * - mail_outbox: one more kind of mail, the approval notices (to owners: a post waits; to the
 *   author: the decision).
 */
export class Approvals1765960000000 implements MigrationInterface {
  name = 'Approvals1765960000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE posts ADD COLUMN approval text CHECK (approval IN ('pending', 'expired'))`);
    await q.query(`ALTER TABLE posts DROP CONSTRAINT posts_draft_shape`);
    await q.query(`
      ALTER TABLE posts ADD CONSTRAINT posts_draft_shape CHECK (
        -- A scheduled post has a time and jobs, and no approval state.
        (draft_targets IS NULL AND scheduled_at IS NOT NULL AND approval IS NULL)
        -- A draft has no time and no deadline (it is not scheduled).
        OR (draft_targets IS NOT NULL AND approval IS NULL AND scheduled_at IS NULL AND publish_by IS NULL)
        -- A post waiting for approval (or expired waiting) keeps its accounts and may keep the
        -- time and deadline it was asked for; a deadline, when there is a time, is after it.
        OR (draft_targets IS NOT NULL AND approval IS NOT NULL AND (scheduled_at IS NULL OR publish_by IS NULL OR publish_by > scheduled_at))
      )`);
    // The settings page's "Waiting for approval" list and GET /v1/posts?status=pending_approval.
    await q.query(`CREATE INDEX posts_pending_approval ON posts (workspace_id, created_at) WHERE approval = 'pending'`);

    await q.query(`
      CREATE TABLE approval_settings (
        workspace_id    uuid PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
        -- off: nobody needs approval; editors: posts by editors (people or keys) need an owner's;
        -- everyone: every post needs the approval of an owner other than its author.
        mode            text NOT NULL DEFAULT 'off' CHECK (mode IN ('off', 'editors', 'everyone')),
        -- Whether a decision made through a client review link counts.
        client_approval boolean NOT NULL DEFAULT false,
        updated_at      timestamptz NOT NULL DEFAULT now()
      )`);

    await q.query(`
      CREATE TABLE approval_steps (
        id           uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        -- A post deleted (a cancelled draft or pending post) takes its steps with it; the audit
        -- trail keeps what happened.
        post_id      uuid NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
        step         text NOT NULL CHECK (step IN ('submitted', 'resubmitted', 'approved', 'rejected', 'expired')),
        -- A rejection always says why (1 to 2,000 characters); an approval may say something.
        comment      text CHECK (comment IS NULL OR length(comment) BETWEEN 1 AND 2000),
        CHECK (step <> 'rejected' OR comment IS NOT NULL),
        -- Who: a person, an API key, or a reviewer of a client review link (its id in actor_id).
        actor_kind   text NOT NULL CHECK (actor_kind IN ('person', 'key', 'reviewer')),
        actor_id     text NOT NULL,
        -- The name as it was then (a person's "Name <email>", a key's label, the name a reviewer gave).
        actor_label  text NOT NULL CHECK (length(actor_label) BETWEEN 1 AND 300),
        created_at   timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await q.query(`CREATE INDEX approval_steps_post ON approval_steps (post_id, created_at)`);

    await q.query(`ALTER TABLE mail_outbox DROP CONSTRAINT mail_outbox_kind_check`);
    await q.query(
      `ALTER TABLE mail_outbox ADD CONSTRAINT mail_outbox_kind_check
       CHECK (kind IN ('digest', 'alert', 'invitation', 'password_reset', 'recipient_confirmation', 'approval'))`,
    );
    // Counting a workspace's approval mails of the last 24 hours (their daily limit).
    await q.query(`CREATE INDEX mail_outbox_approval_mails ON mail_outbox (workspace_id, created_at) WHERE kind = 'approval'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX mail_outbox_approval_mails`);
    await q.query(`DELETE FROM mail_outbox WHERE kind = 'approval'`);
    await q.query(`ALTER TABLE mail_outbox DROP CONSTRAINT mail_outbox_kind_check`);
    await q.query(
      `ALTER TABLE mail_outbox ADD CONSTRAINT mail_outbox_kind_check
       CHECK (kind IN ('digest', 'alert', 'invitation', 'password_reset', 'recipient_confirmation'))`,
    );
    await q.query(`DROP TABLE approval_steps`);
    await q.query(`DROP TABLE approval_settings`);
    await q.query(`DROP INDEX posts_pending_approval`);
    // Posts waiting for approval (or expired) go back to being drafts: nothing of them was queued.
    await q.query(`UPDATE posts SET scheduled_at = NULL, publish_by = NULL WHERE approval IS NOT NULL`);
    await q.query(`ALTER TABLE posts DROP CONSTRAINT posts_draft_shape`);
    await q.query(`ALTER TABLE posts DROP COLUMN approval`);
    await q.query(`
      ALTER TABLE posts ADD CONSTRAINT posts_draft_shape CHECK (
        (draft_targets IS NULL AND scheduled_at IS NOT NULL)
        OR (draft_targets IS NOT NULL AND scheduled_at IS NULL AND publish_by IS NULL)
      )`);
  }
}
