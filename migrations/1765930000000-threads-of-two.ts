import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Threads of two (docs/api.md "Threads"): `thread` takes 1 to 25 further parts, so a thread has 2
 * to 26 posts. A post with one reply is the most common thread, and the CHECK of 1765100000000
 * (2 to 25 further parts) refused it. The jobs' side needs nothing: `job_state.parts` holds up
 * to 26 published parts whatever the thread's length, and `job_payloads.payload` keeps its thread
 * without a count CHECK.
 */
export class ThreadsOfTwo1765930000000 implements MigrationInterface {
  name = 'ThreadsOfTwo1765930000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE posts DROP CONSTRAINT posts_thread_check`);
    // CHECK: NULL (a single post) or an array of 1 to 25 further parts, the API's own limits
    // (posts.dto.ts MIN_THREAD_PARTS / MAX_THREAD_PARTS), so no writer can store another; an empty
    // array is not a thread (a single post is NULL).
    await q.query(`
      ALTER TABLE posts ADD CONSTRAINT posts_thread_parts
        CHECK (thread IS NULL OR (jsonb_typeof(thread) = 'array' AND jsonb_array_length(thread) BETWEEN 1 AND 25))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE posts DROP CONSTRAINT posts_thread_parts`);
    // The old rule again, NOT VALID: posts already written with a thread of two stay as they are
    // (dropping or changing what a person wrote is not a downgrade's business, and the older code
    // publishes them as it publishes any thread); only new rows are held to 2 to 25 again.
    await q.query(`
      ALTER TABLE posts ADD CONSTRAINT posts_thread_check
        CHECK (thread IS NULL OR (jsonb_typeof(thread) = 'array' AND jsonb_array_length(thread) BETWEEN 2 AND 25)) NOT VALID`);
  }
}
