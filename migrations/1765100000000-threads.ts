import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Threads (docs/api.md "Threads"): a post may carry 2–25 further parts after its first, and a
 * job records each part a platform published, so a retry or a requeue continues from the first
 * unpublished part instead of publishing a part twice.
 */
export class Threads1765100000000 implements MigrationInterface {
  name = 'Threads1765100000000';

  async up(q: QueryRunner): Promise<void> {
    // The further parts as the API took them: [{ text, link, media }]. NULL: a single post.
    // CHECK: an array of 2 to 25 parts (the API's own limits, so no writer can store another).
    await q.query(`
      ALTER TABLE posts ADD COLUMN thread jsonb
        CHECK (thread IS NULL OR (jsonb_typeof(thread) = 'array' AND jsonb_array_length(thread) BETWEEN 2 AND 25))`);
    // The parts of this job the platform has published so far, in order: [{ index, uri, cid, url }]
    // (index 0 is the first part). Written with each attempt's outcome (record-attempts.ts), kept
    // across retries and requeues: the Bluesky connector skips these parts and replies to them.
    // CHECK: an array of at most 26 entries (the first part and 25 further ones).
    await q.query(`
      ALTER TABLE jobs ADD COLUMN parts jsonb NOT NULL DEFAULT '[]'
        CHECK (jsonb_typeof(parts) = 'array' AND jsonb_array_length(parts) <= 26)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs DROP COLUMN parts`);
    await q.query(`ALTER TABLE posts DROP COLUMN thread`);
  }
}
