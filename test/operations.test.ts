import { NEWEST_LINKEDIN_VERSION } from '../src/config/linkedin-versions';
import { bootTestApp, TestApp } from './support/app';
import { withClient } from './support/database';
import { bearer } from './support/config';

describe('operations endpoints', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await bootTestApp({ config: { allowPrivateUrls: true } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('serves liveness and readiness without a key', async () => {
    await t.http().get('/health/live').expect(200, { status: 'ok' });
    const ready = await t.http().get('/health/ready').expect(200);
    expect(ready.body.details).toMatchObject({ database: { status: 'up' }, migrations: { status: 'up' } });
    // The default LinkedIn version: reported, and without a warning while its sunset is far.
    expect(ready.body.details.linkedinVersion).toEqual({
      status: 'up',
      version: NEWEST_LINKEDIN_VERSION,
      sunset: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
    });
  });

  it('reports not ready while a migration is pending', async () => {
    const [row] = await withClient(t.databaseUrl, async (db) => (await db.query('SELECT * FROM migrations ORDER BY id DESC LIMIT 1')).rows);
    await withClient(t.databaseUrl, (db) => db.query('DELETE FROM migrations WHERE id = $1', [row.id]));
    try {
      const res = await t.http().get('/health/ready').expect(503);
      expect(res.body.details.migrations).toEqual({ status: 'down', message: 'migrations are pending' });
    } finally {
      await withClient(t.databaseUrl, (db) =>
        db.query('INSERT INTO migrations (id, timestamp, name) VALUES ($1, $2, $3)', [row.id, row.timestamp, row.name]),
      );
    }
    await t.http().get('/health/ready').expect(200);
  });

  it('exports Prometheus metrics with request counts by route pattern', async () => {
    await t.http().get('/v1/api-keys').set(bearer(t.adminKey)).expect(200);
    await t.http().delete('/v1/api-keys/00000000-0000-0000-0000-000000000000').set(bearer(t.adminKey)).expect(404);
    const res = await t.http().get('/metrics').set(bearer(t.config.metrics.token!)).expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toMatch(/herald_http_requests_total\{method="GET",route="\/v1\/api-keys",status="200"\} [1-9]/);
    expect(res.text).toMatch(/herald_http_requests_total\{method="DELETE",route="\/v1\/api-keys\/:id",status="404"\} 1/);
    expect(res.text).toContain('herald_http_request_duration_seconds_bucket');
    expect(res.text).toContain('herald_process_cpu_user_seconds_total');
    expect(res.text).not.toContain(t.adminKey);
  });

  it('exports the queue as it stands: jobs per state and the age of the oldest due job', async () => {
    const account = await t
      .http()
      .post('/v1/accounts')
      .set(bearer(t.adminKey))
      .send({ provider: 'webhook', name: 'Blog', config: { url: 'http://127.0.0.1:9/hook' } })
      .expect(201);
    const soon = new Date(Date.now() + 3_600_000).toISOString();
    await t
      .http()
      .post('/v1/posts')
      .set(bearer(t.adminKey))
      .send({ text: 'now', targets: [{ accountId: account.body.id }] })
      .expect(201);
    await t
      .http()
      .post('/v1/posts')
      .set(bearer(t.adminKey))
      .send({ text: 'later', scheduledAt: soon, targets: [{ accountId: account.body.id }] })
      .expect(201);
    const res = await t.http().get('/metrics').set(bearer(t.config.metrics.token!)).expect(200);
    // The worker is off in this app: the due job waits, and the metrics say so.
    expect(res.text).toMatch(/herald_queue_jobs\{state="due"\} 1\n/);
    expect(res.text).toMatch(/herald_queue_jobs\{state="later"\} 1\n/);
    expect(res.text).toMatch(/herald_queue_jobs\{state="in_progress"\} 0\n/);
    const age = Number(/herald_queue_oldest_due_seconds ([0-9.e-]+)/.exec(res.text)?.[1]);
    expect(age).toBeGreaterThan(0);
    expect(age).toBeLessThan(60);
  });

  it('serves the OpenAPI document and its page', async () => {
    const doc = await t.http().get('/docs-json').expect(200);
    expect(doc.body.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.body.paths)).toEqual(expect.arrayContaining(['/v1/api-keys', '/v1/workspaces']));
    const page = await t.http().get('/docs').expect(200);
    expect(page.text).toContain('swagger');
  });
});
