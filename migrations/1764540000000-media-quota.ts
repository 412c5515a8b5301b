import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-workspace media usage, for the media quota (MEDIA_QUOTA_BYTES, MEDIA_QUOTA_COUNT).
 * Kept as one row per workspace, changed in the same statement as the media row it counts:
 * the row lock makes concurrent uploads of one workspace take turns, so two of them cannot both
 * pass the check and overshoot the quota together, and the check costs one row instead of a
 * sum over the workspace's media at every upload.
 */
export class MediaQuota1764540000000 implements MigrationInterface {
  name = 'MediaQuota1764540000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE media_usage (
        workspace_id  uuid PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
        -- Never negative: a delete that finds no row to subtract from is a bug, not a credit.
        bytes         bigint NOT NULL DEFAULT 0 CHECK (bytes >= 0),
        items         integer NOT NULL DEFAULT 0 CHECK (items >= 0)
      )`);
    await q.query(`
      INSERT INTO media_usage (workspace_id, bytes, items)
      SELECT workspace_id, sum(byte_size), count(*) FROM media GROUP BY workspace_id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE media_usage`);
  }
}
