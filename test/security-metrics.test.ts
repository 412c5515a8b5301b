import { Db } from '../src/database/db';
import { bootTestApp, scrapeMetrics, TestApp } from './support/app';
import { createTestDatabase, withClient } from './support/database';
import { killJobs } from './support/dlq';
import { createPost, createWebhookAccount } from './support/engine';
import { pollUntil } from './support/poll';
import { bearer } from './support/config';

/**
 * GET /metrics: off without METRICS_TOKEN, behind `Authorization: Bearer <METRICS_TOKEN>` with
 * it, no tenant id among its labels, and scrapes that share the database reads instead of each
 * counting the queue and the dead-letter queue again.
 */
describe('/metrics access', () => {
  it('is off (403 naming METRICS_TOKEN) when no token is configured', async () => {
    const t = await bootTestApp({ config: { metrics: { token: null, databaseRefreshMs: 0 } } });
    try {
      const res = await t.http().get('/metrics').expect(403);
      expect(res.body).toEqual({ statusCode: 403, error: 'Forbidden', message: expect.stringContaining('set METRICS_TOKEN') });
      // Not even the bootstrap API key opens it.
      await t.http().get('/metrics').set(bearer(t.adminKey)).expect(403);
    } finally {
      await t.close();
    }
  });

  describe('with METRICS_TOKEN', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await bootTestApp({ config: { allowPrivateUrls: true } });
    });
    afterAll(() => t.close());

    it('answers 401 with a Bearer challenge without the token, with a wrong one, or with an API key', async () => {
      for (const headers of [
        {},
        bearer('wrong-token-0000000000000000'),
        bearer(t.adminKey),
        { Authorization: `Basic ${t.config.metrics.token}` },
      ]) {
        const res = await t.http().get('/metrics').set(headers).expect(401);
        expect(res.headers['www-authenticate']).toBe('Bearer realm="herald-metrics"');
        expect(res.body.message).toBe('/metrics needs "Authorization: Bearer <METRICS_TOKEN>"');
        expect(res.text).not.toContain('herald_');
      }
    });

    it('serves the Prometheus text with the token', async () => {
      const res = await t.http().get('/metrics').set(bearer(t.config.metrics.token!)).expect(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain;.*version=0\.0\.4/);
      expect(res.text).toContain('herald_http_requests_total');
    });

    it('never puts a workspace or account id in a label, whatever the number of tenants', async () => {
      for (const name of ['Tenant one', 'Tenant two']) {
        const ws = await t.http().post('/v1/workspaces').set(bearer(t.adminKey)).send({ name }).expect(201);
        const key = ws.body.apiKey.key as string;
        const account = await createWebhookAccount(t, key, 'http://127.0.0.1:9/hook');
        const post = await createPost(t, key, { text: 'dies', targets: [{ accountId: account.id }] });
        await killJobs(
          t.databaseUrl,
          post.jobs.map((j) => j.id),
          { reason: 'max_attempts', errorClass: 'transient' },
        );
      }
      const text = await scrapeMetrics(t);
      expect(text).toMatch(/herald_dlq_size\{provider="webhook",reason="max_attempts"\} 2\n/);
      expect(text).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i);
    });
  });
});

describe('/metrics cost', () => {
  it('lets concurrent and repeated scrapes within METRICS_DB_REFRESH_SECONDS share one count of the dead jobs and the queue', async () => {
    const t = await bootTestApp({ config: { metrics: { token: 'metrics-cost-token-000000', databaseRefreshMs: 60_000 } } });
    try {
      const db = t.app.get(Db);
      const spy = jest.spyOn(db, 'query');
      const counted = () => ({
        dlq: spy.mock.calls.filter(([q]) => /status = 'dead' GROUP BY/.test(String(q))).length,
        queue: spy.mock.calls.filter(([q]) => /UNION ALL SELECT 'later'/.test(String(q))).length,
      });
      const scrapes = await Promise.all(Array.from({ length: 20 }, () => scrapeMetrics(t)));
      for (let i = 0; i < 10; i++) scrapes.push(await scrapeMetrics(t));
      expect(scrapes.every((s) => s.includes('herald_dlq_size{provider="webhook",reason="permanent"} 0'))).toBe(true);
      expect(counted()).toEqual({ dlq: 1, queue: 1 });
      spy.mockRestore();
    } finally {
      await t.close();
    }
  });

  it('reads again once the refresh interval has passed', async () => {
    const t = await bootTestApp({
      config: { allowPrivateUrls: true, metrics: { token: 'metrics-cost-token-000000', databaseRefreshMs: 1_000 } },
    });
    try {
      const account = await createWebhookAccount(t, t.adminKey, 'http://127.0.0.1:9/hook');
      const line = /herald_dlq_size\{provider="webhook",reason="permanent"\} (\d+)/;
      expect(line.exec(await scrapeMetrics(t))?.[1]).toBe('0');
      const post = await createPost(t, t.adminKey, { text: 'dies', targets: [{ accountId: account.id }] });
      await killJobs(
        t.databaseUrl,
        post.jobs.map((j) => j.id),
      );
      // Once the interval has passed, a scrape reads again and counts the new dead job. (That
      // scrapes within the interval reuse the last read is the test above, with an interval
      // no loaded machine outruns; here a check "still 0 within 1 s" would race the clock.)
      await pollUntil(
        'a scrape to count the new dead job',
        async () => line.exec(await scrapeMetrics(t))?.[1],
        (n) => n === '1',
      );
    } finally {
      await t.close();
    }
  });

  it('keeps answering with the process metrics when the database read fails, and counts the failure', async () => {
    const { url } = await createTestDatabase();
    const t = await bootTestApp({ databaseUrl: url });
    try {
      // The queue's gauges read job_state, the dead-letter ones the jobs view: hide both.
      await withClient(url, (c) => c.query('ALTER TABLE job_state RENAME TO job_state_hidden; ALTER VIEW jobs RENAME TO jobs_hidden'));
      const text = await scrapeMetrics(t);
      expect(text).toContain('herald_process_cpu_user_seconds_total');
      expect(text).not.toMatch(/^herald_dlq_size\{/m);
      expect(text).not.toMatch(/^herald_queue_jobs\{/m);
      // The counter is written before the gauges read, so a failure shows from the next scrape on.
      expect(await scrapeMetrics(t)).toMatch(/herald_metrics_read_errors_total\{source="dlq"\} [1-9]/);
      await withClient(url, (c) => c.query('ALTER TABLE job_state_hidden RENAME TO job_state; ALTER VIEW jobs_hidden RENAME TO jobs'));
      expect(await scrapeMetrics(t)).toMatch(/^herald_dlq_size\{/m);
    } finally {
      await t.close();
    }
  });
});
