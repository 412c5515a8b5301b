import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * LinkedIn endpoints belong to the operator (LINKEDIN_API_BASE_URL, LINKEDIN_OAUTH_BASE_URL).
 * An account's config used to accept `apiBaseUrl` / `oauthBaseUrl`, and the token refresh sent
 * the operator's LINKEDIN_CLIENT_SECRET to `${oauthBaseUrl}/oauth/v2/accessToken`: any workspace
 * could collect it on a server of its own. The connector no longer reads them; this removes them
 * from stored accounts (so the API stops showing overrides that do nothing) and forbids them.
 */
export class LinkedInOperatorEndpoints1764510000000 implements MigrationInterface {
  name = 'LinkedInOperatorEndpoints1764510000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      UPDATE accounts SET config = config - 'apiBaseUrl' - 'oauthBaseUrl'
       WHERE provider = 'linkedin' AND (config ? 'apiBaseUrl' OR config ? 'oauthBaseUrl')`);
    // Why a CHECK as well as the connector's validation: an endpoint stored by any other path
    // (a restored backup, a hand-written UPDATE, a future code path) would once again decide
    // where the client secret goes. The database refuses it outright.
    await q.query(`
      ALTER TABLE accounts ADD CONSTRAINT accounts_linkedin_operator_endpoints
        CHECK (provider <> 'linkedin' OR NOT (config ? 'apiBaseUrl' OR config ? 'oauthBaseUrl'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    // The removed endpoints are not restored: they were the hole this migration closes.
    await q.query(`ALTER TABLE accounts DROP CONSTRAINT accounts_linkedin_operator_endpoints`);
  }
}
