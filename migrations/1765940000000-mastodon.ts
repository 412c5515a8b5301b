import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Mastodon (issue 31): a fourth platform an account can be connected to. The accounts table's
 * CHECK on `provider` lists every platform Herald publishes to (src/vocabulary's PROVIDERS), so a
 * bug cannot store an account no connector could deliver for; it now lists `mastodon` too.
 *
 * A Mastodon account's config names its instance (`instanceUrl`): every call of its connector goes
 * there, so an account without one could never publish. The second CHECK holds that, as
 * accounts_linkedin_operator_endpoints holds LinkedIn's config to its rule.
 *
 * Down refuses while Mastodon accounts exist (their jobs keep them from being deleted, and the old
 * CHECK cannot hold them): remove them first.
 */
export class Mastodon1765940000000 implements MigrationInterface {
  name = 'Mastodon1765940000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE accounts DROP CONSTRAINT accounts_provider_check`);
    // The platforms Herald publishes to (src/vocabulary/vocabulary.ts PROVIDERS lists the same).
    await q.query(`
      ALTER TABLE accounts ADD CONSTRAINT accounts_provider_check
        CHECK (provider IN ('bluesky', 'linkedin', 'mastodon', 'webhook'))`);
    // A Mastodon account knows its instance: the address its connector calls (an origin string).
    // coalesce: a config without the key gives NULL, which a CHECK would let through.
    await q.query(`
      ALTER TABLE accounts ADD CONSTRAINT accounts_mastodon_instance
        CHECK (provider <> 'mastodon' OR coalesce(jsonb_typeof(config->'instanceUrl') = 'string', false))`);
  }

  async down(q: QueryRunner): Promise<void> {
    const rows = (await q.query(`SELECT count(*)::int AS n FROM accounts WHERE provider = 'mastodon'`)) as { n: number }[];
    if ((rows[0]?.n ?? 0) > 0) {
      throw new Error(`${rows[0].n} Mastodon account(s) exist: remove them (DELETE /v1/accounts/:id) and their jobs before going back`);
    }
    await q.query(`ALTER TABLE accounts DROP CONSTRAINT accounts_mastodon_instance`);
    await q.query(`ALTER TABLE accounts DROP CONSTRAINT accounts_provider_check`);
    await q.query(`ALTER TABLE accounts ADD CONSTRAINT accounts_provider_check CHECK (provider IN ('bluesky', 'linkedin', 'webhook'))`);
  }
}
