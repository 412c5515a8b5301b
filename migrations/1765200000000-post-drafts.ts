import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Drafts (the composer of the settings page, `status: "draft"` in the API): a post kept without
 * a time, never published, scheduled later. A draft has no jobs (the queue owns job rows and a
 * draft is not queued): the accounts it will go to are kept on the post itself, in
 * `draft_targets`, until it is scheduled; scheduling writes its jobs and clears the column in
 * one statement. So:
 * - a draft is exactly a post whose `draft_targets` is set, and it has no time and no deadline;
 * - every other post has a time, as before.
 */
export class PostDrafts1765200000000 implements MigrationInterface {
  name = 'PostDrafts1765200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE posts ALTER COLUMN scheduled_at DROP NOT NULL`);
    await q.query(`ALTER TABLE posts ADD COLUMN draft_targets jsonb`);
    await q.query(`
      ALTER TABLE posts ADD CONSTRAINT posts_draft_shape CHECK (
        -- A draft has no time and no deadline (it is not scheduled); any other post has a time.
        (draft_targets IS NULL AND scheduled_at IS NOT NULL)
        OR (draft_targets IS NOT NULL AND scheduled_at IS NULL AND publish_by IS NULL)
      )`);
    await q.query(`
      ALTER TABLE posts ADD CONSTRAINT posts_draft_targets_list CHECK (
        -- [{ "accountId": "…", "text"?: "…" }, …]: 1 to 20 targets, as POST /v1/posts takes them.
        draft_targets IS NULL OR (jsonb_typeof(draft_targets) = 'array' AND jsonb_array_length(draft_targets) BETWEEN 1 AND 20)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    // Drafts have no time to give back: they go (nothing of them was ever queued or sent).
    await q.query(`DELETE FROM posts WHERE draft_targets IS NOT NULL`);
    await q.query(`ALTER TABLE posts DROP CONSTRAINT posts_draft_targets_list`);
    await q.query(`ALTER TABLE posts DROP CONSTRAINT posts_draft_shape`);
    await q.query(`ALTER TABLE posts DROP COLUMN draft_targets`);
    await q.query(`ALTER TABLE posts ALTER COLUMN scheduled_at SET NOT NULL`);
  }
}
