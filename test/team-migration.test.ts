import { DataSource } from 'typeorm';
import { AuditService } from '../src/audit/audit.service';
import { dataSourceOptions, runMigrations } from '../src/database/data-source';
import { RequeueDto } from '../src/dead-letter/dead-letter.dto';
import { DeadLetterModule } from '../src/dead-letter/dead-letter.module';
import { DeadLetterService } from '../src/dead-letter/dead-letter.service';
import { PostsModule } from '../src/posts/posts.module';
import { ApiKeysService } from '../src/workspaces/api-keys.service';
import { createTestDatabase, undoMigrationsThrough, withClient } from './support/database';
import { killJobs } from './support/dlq';
import { bootMedium } from './support/medium';
import { createPost, webhookAccount } from './support/medium-factories';

/**
 * The team migration (1764600000000) on data of the version before it, both ways: its `down`
 * gives back admin/member keys and the dead-letter queue's own job_audit; its `up` makes every
 * key an owner (the admin one the bootstrap key), tells a rotated-out bootstrap key from a
 * revoked one, and moves job_audit into the one audit trail without losing who did what. The data
 * is made, and read back after the upgrade, through the services (a medium context,
 * ./support/medium.ts: posts and the dead-letter queue), as the API's routes would.
 */
describe('the team migration', () => {
  it('converts keys and the dead-letter audit trail, down and up again', async () => {
    const { url } = await createTestDatabase();
    const quiet = { allowPrivateUrls: true, notifications: { enabled: false, pollIntervalMs: 1000, sweepIntervalSeconds: 60 } };
    const modules = [PostsModule, DeadLetterModule];
    const t = await bootMedium({ modules, databaseUrl: url, config: quiet });
    let jobId: string;
    let memberId: string;
    try {
      // POST /v1/api-keys { name: 'CI' } by the bootstrap key, then the new key as its caller.
      const keys = t.get(ApiKeysService);
      const member = await keys.createKey(t.admin, 'CI');
      memberId = member.id;
      const memberAuth = await keys.authenticate(`Bearer ${member.key}`);
      const account = await webhookAccount(t, memberAuth, 'http://127.0.0.1:9/hook');
      const post = await createPost(t, memberAuth, {
        text: 'Migrated',
        targets: [{ accountId: account.id }],
        scheduledAt: new Date(Date.now() + 3_600_000).toISOString(),
      });
      jobId = post.jobs[0].id;
      await killJobs(url, [jobId]);
      await t.get(DeadLetterService).requeue(memberAuth, jobId, await t.input(RequeueDto, {}));
    } finally {
      await t.close();
    }

    const ds = new DataSource(dataSourceOptions(url));
    await ds.initialize();
    try {
      // Undo the migrations after the team one first, then the team migration itself.
      await undoMigrationsThrough(ds, 'Team1764600000000');
      await withClient(url, async (c) => {
        const keys = (await c.query<{ name: string; role: string }>(`SELECT name, role FROM api_keys ORDER BY name`)).rows;
        expect(keys).toEqual([
          { name: 'CI', role: 'member' },
          { name: 'HERALD_API_KEY', role: 'admin' },
        ]);
        const trail = (await c.query(`SELECT job_id, api_key_id, action FROM job_audit`)).rows;
        expect(trail).toEqual([{ job_id: jobId, api_key_id: memberId, action: 'requeue' }]);
        // An older admin key that an earlier rotation revoked, as the version before left it.
        await c.query(
          `INSERT INTO api_keys (workspace_id, name, key_hash, prefix, role, created_at, revoked_at)
           SELECT workspace_id, 'old HERALD_API_KEY', sha256('old'::bytea), 'old', 'admin', created_at - interval '1 day', now()
           FROM api_keys WHERE role = 'admin'`,
        );
      });
      await runMigrations(ds);
    } finally {
      await ds.destroy();
    }

    await withClient(url, async (c) => {
      const keys = (
        await c.query<{ name: string; role: string; bootstrap: boolean; replaced: boolean }>(
          `SELECT name, role, bootstrap, replaced_by IS NOT NULL AS replaced FROM api_keys ORDER BY name`,
        )
      ).rows;
      expect(keys).toEqual([
        { name: 'CI', role: 'owner', bootstrap: false, replaced: false },
        { name: 'HERALD_API_KEY', role: 'owner', bootstrap: true, replaced: false },
        { name: 'old HERALD_API_KEY', role: 'owner', bootstrap: true, replaced: true },
      ]);
    });
    const again = await bootMedium({ modules, databaseUrl: url, config: quiet });
    try {
      const job = await again.get(DeadLetterService).get(again.admin.workspaceId, jobId);
      expect(job.audit).toEqual([
        expect.objectContaining({
          action: 'requeue',
          apiKeyId: memberId,
          actor: { kind: 'key', id: memberId, label: expect.stringMatching(/^key “CI” \(hk_/) },
        }),
      ]);
      const audit = await again.get(AuditService).list(again.admin.workspaceId, { kind: 'failed_post' });
      expect(audit.data).toHaveLength(1);
    } finally {
      await again.close();
    }
  });
});
