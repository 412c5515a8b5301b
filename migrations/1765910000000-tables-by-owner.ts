import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Three tables get the name of the module that owns them now (issue 33): a table's name tells a
 * reader whose statements write it, and the `settings_` prefix had come to say the opposite.
 *
 * - settings_login_throttle → login_throttle: the counts of wrong keys and passwords. Written by
 *   src/people/login-throttle.repository.ts, for the page's logins and the API's Bearer keys alike
 *   (the API-key guard counts into it too), so it was never the page's alone.
 * - settings_sessions → page_sessions: the settings page's browser sessions. Their service and
 *   repository moved to src/people (who is logged in, with which key or as which person); the
 *   page keeps only the cookie and the CSRF checks. Still the page's sessions, hence the name.
 * - settings_link_card_fetches → link_card_fetches: the composer's link-card count per person,
 *   now written by src/posts/link-card-quota.repository.ts (the card previews a post; the page
 *   only shows it).
 *
 * Their constraints and indexes carry the table's name (PostgreSQL names the unnamed ones after
 * the table: `settings_sessions_pkey`, `settings_login_throttle_check`…), and an error naming a
 * constraint should name the table it is on, so every one whose name starts with the old table's
 * is renamed with it. A rename keeps the rows, the foreign keys that point at the table
 * (settings_oauth_states.session_id follows page_sessions) and every index: nothing is rewritten.
 *
 * Down renames all of it back.
 */
const RENAMES: readonly (readonly [from: string, to: string])[] = [
  ['settings_login_throttle', 'login_throttle'],
  ['settings_sessions', 'page_sessions'],
  ['settings_link_card_fetches', 'link_card_fetches'],
];

export class TablesByOwner1765910000000 implements MigrationInterface {
  name = 'TablesByOwner1765910000000';

  // Each rename written out whole, so a reader (and src/architecture.spec.ts, which lists the
  // tables migrations leave) sees which table became which.
  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE settings_login_throttle RENAME TO login_throttle`);
    await q.query(`ALTER TABLE settings_sessions RENAME TO page_sessions`);
    await q.query(`ALTER TABLE settings_link_card_fetches RENAME TO link_card_fetches`);
    for (const [from, to] of RENAMES) await renameParts(q, from, to);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE link_card_fetches RENAME TO settings_link_card_fetches`);
    await q.query(`ALTER TABLE page_sessions RENAME TO settings_sessions`);
    await q.query(`ALTER TABLE login_throttle RENAME TO settings_login_throttle`);
    for (const [from, to] of [...RENAMES].reverse()) await renameParts(q, to, from);
  }
}

/**
 * After table `from` was renamed `to`: renames each of its constraints and indexes named
 * `<from>_…` to `<to>_…`. Constraints first: renaming a primary key or a unique constraint renames the index
 * behind it, so the second loop finds only the indexes of their own (settings_sessions_expiry…).
 * The names are read from the catalogue rather than listed, because the unnamed CHECKs were
 * named by PostgreSQL (`…_check`, `…_check1`) and a list would have to guess them.
 */
async function renameParts(q: QueryRunner, from: string, to: string): Promise<void> {
  await q.query(`
    DO $$
    DECLARE
      old_prefix constant text := '${from}_';
      new_prefix constant text := '${to}_';
      r record;
    BEGIN
      FOR r IN
        SELECT conname AS name FROM pg_constraint
        WHERE conrelid = '${to}'::regclass AND left(conname, length(old_prefix)) = old_prefix
      LOOP
        EXECUTE format('ALTER TABLE ${to} RENAME CONSTRAINT %I TO %I', r.name, new_prefix || substr(r.name, length(old_prefix) + 1));
      END LOOP;
      FOR r IN
        SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE i.indrelid = '${to}'::regclass AND left(c.relname, length(old_prefix)) = old_prefix
      LOOP
        EXECUTE format('ALTER INDEX %I RENAME TO %I', r.name, new_prefix || substr(r.name, length(old_prefix) + 1));
      END LOOP;
    END $$`);
}
