import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The composer's link cards, counted per person (src/settings/compose/link-card-quota.ts): at most
 * 20 fetches a minute for a session's person or API key, in one count for every Herald process.
 * One row per person who ever fetched a card, rewritten in place when a new window opens, so the
 * table stays as small as the team. Owned by src/settings (link-card-quota.repository.ts).
 *
 * No foreign key: `principal` is a person's or an API key's id, as the session's caller is. The
 * CHECKs keep it to that shape and the count to what the statement writes (it stops counting at a
 * million: a window's refused fetches need no exact count).
 */
export class LinkCardFetches1765870000000 implements MigrationInterface {
  name = 'LinkCardFetches1765870000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE settings_link_card_fetches (
        principal         text PRIMARY KEY CHECK (principal ~ '^(key|person):[0-9a-f-]{36}$'),
        window_opened_at  timestamptz NOT NULL,
        fetches           integer NOT NULL CHECK (fetches BETWEEN 1 AND 1000000)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE settings_link_card_fetches`);
  }
}
