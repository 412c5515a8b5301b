import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * settings_oauth_states becomes account_connect_states: the one-use `state` values of "Connect
 * with LinkedIn" and "Connect with Bluesky" moved from the settings page to the accounts module's
 * connect flows (src/accounts/connect/connect-states.repository.ts is their only SQL), and a
 * table's name says who owns its rows. Only names change (the table, its index and its
 * constraints, which PostgreSQL named after the old table): no row is rewritten, and a flow
 * started before the upgrade still finishes after it. Its columns are as 1764520000000 made them;
 * the state it holds is Herald's own, whether it travels to LinkedIn as `state` or through the
 * Bluesky OAuth library as its `appState`.
 */
const CONSTRAINTS = [
  'pkey',
  'state_hash_check',
  'session_id_fkey',
  'browser_hash_check',
  'account_id_fkey',
  'account_name_check',
  // The two table CHECKs (expires_at > created_at; an account or a name), as PostgreSQL numbered them.
  'check',
  'check1',
];

export class AccountConnectStates1765900000000 implements MigrationInterface {
  name = 'AccountConnectStates1765900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE settings_oauth_states RENAME TO account_connect_states`);
    for (const c of CONSTRAINTS) {
      await q.query(`ALTER TABLE account_connect_states RENAME CONSTRAINT settings_oauth_states_${c} TO account_connect_states_${c}`);
    }
    await q.query(`ALTER INDEX settings_oauth_states_expiry RENAME TO account_connect_states_expiry`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER INDEX account_connect_states_expiry RENAME TO settings_oauth_states_expiry`);
    for (const c of CONSTRAINTS) {
      await q.query(`ALTER TABLE account_connect_states RENAME CONSTRAINT account_connect_states_${c} TO settings_oauth_states_${c}`);
    }
    await q.query(`ALTER TABLE account_connect_states RENAME TO settings_oauth_states`);
  }
}
