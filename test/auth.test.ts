import { hashApiKey } from '../src/workspaces/api-key.util';
import { bootTestApp, TestApp } from './support/app';
import { createTestDatabase, withClient } from './support/database';
import { bearer } from './support/config';

describe('API keys and workspaces', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await bootTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  async function newWorkspace(name: string): Promise<{ id: string; key: string }> {
    const res = await t.http().post('/v1/workspaces').set(bearer(t.adminKey)).send({ name }).expect(201);
    return { id: res.body.workspace.id, key: res.body.apiKey.key };
  }

  it('answers 401 with the error shape when no key is sent', async () => {
    const res = await t.http().get('/v1/api-keys').expect(401);
    expect(res.body).toEqual({
      statusCode: 401,
      error: 'Unauthorized',
      message: expect.stringContaining('Authorization: Bearer'),
    });
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
  });

  it('answers 401 for a wrong key and for a malformed header', async () => {
    await t.http().get('/v1/api-keys').set(bearer('hk_not-a-real-key-at-all-000000000000000')).expect(401);
    await t.http().get('/v1/api-keys').set('Authorization', `Basic ${t.adminKey}`).expect(401);
    await t.http().get('/v1/api-keys').set('Authorization', 'Bearer').expect(401);
  });

  it('answers 401 for a deleted key, at once', async () => {
    const created = await t.http().post('/v1/api-keys').set(bearer(t.adminKey)).send({ name: 'temp' }).expect(201);
    const key: string = created.body.key;
    expect(key).toMatch(/^hk_/);
    await t.http().get('/v1/api-keys').set(bearer(key)).expect(200);
    await t.http().delete(`/v1/api-keys/${created.body.id}`).set(bearer(t.adminKey)).expect(204);
    const res = await t.http().get('/v1/api-keys').set(bearer(key)).expect(401);
    expect(res.body.message).toMatch(/invalid or revoked/i);
    // Deleting it again: it is gone.
    await t.http().delete(`/v1/api-keys/${created.body.id}`).set(bearer(t.adminKey)).expect(404);
  });

  it('creates a workspace with its first key, only with the bootstrap key', async () => {
    const res = await t.http().post('/v1/workspaces').set(bearer(t.adminKey)).send({ name: 'Marketing' }).expect(201);
    expect(res.body.workspace).toEqual({ id: expect.any(String), name: 'Marketing', createdAt: expect.any(String) });
    expect(res.body.apiKey.key).toMatch(/^hk_[A-Za-z0-9_-]{43}$/);
    const member = res.body.apiKey.key as string;
    const denied = await t.http().post('/v1/workspaces').set(bearer(member)).send({ name: 'Sneaky' }).expect(403);
    expect(denied.body.message).toMatch(/bootstrap key/);
  });

  it('never lists a key or its hash, and pages with a cursor', async () => {
    const ws = await newWorkspace('Paging');
    for (const name of ['one', 'two', 'three']) {
      await t.http().post('/v1/api-keys').set(bearer(ws.key)).send({ name }).expect(201);
    }
    const first = await t.http().get('/v1/api-keys?limit=2').set(bearer(ws.key)).expect(200);
    expect(first.body.data.map((k: { name: string }) => k.name)).toEqual(['three', 'two']);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await t.http().get(`/v1/api-keys?limit=2&cursor=${first.body.nextCursor}`).set(bearer(ws.key)).expect(200);
    expect(second.body.data.map((k: { name: string }) => k.name)).toEqual(['one', 'First key']);
    expect(second.body.nextCursor).toBeNull();
    const text = JSON.stringify([first.body, second.body]);
    expect(text).not.toContain(ws.key);
    expect(text).not.toMatch(/hk_[A-Za-z0-9_-]{43}/);
    expect(text).not.toMatch(/hash/i);
  });

  it("keeps workspaces apart: another workspace's key ids are 404", async () => {
    const a = await newWorkspace('A');
    const b = await newWorkspace('B');
    const bKey = await t.http().post('/v1/api-keys').set(bearer(b.key)).send({ name: 'b-only' }).expect(201);
    const listA = await t.http().get('/v1/api-keys').set(bearer(a.key)).expect(200);
    expect(listA.body.data.map((k: { id: string }) => k.id)).not.toContain(bKey.body.id);
    const res = await t.http().delete(`/v1/api-keys/${bKey.body.id}`).set(bearer(a.key)).expect(404);
    expect(res.body.message).toContain(bKey.body.id);
    // B's key still works.
    await t.http().get('/v1/api-keys').set(bearer(bKey.body.key)).expect(200);
  });

  it('answers 404 for an id that is not a UUID', async () => {
    await t.http().delete('/v1/api-keys/not-a-uuid').set(bearer(t.adminKey)).expect(404);
  });

  it('rejects a bad limit and a forged cursor with 400', async () => {
    const res = await t.http().get('/v1/api-keys?limit=500').set(bearer(t.adminKey)).expect(400);
    expect(res.body.message).toMatch(/limit/);
    const cur = await t.http().get('/v1/api-keys?cursor=garbage').set(bearer(t.adminKey)).expect(400);
    expect(cur.body.message).toMatch(/cursor/);
  });
});

describe('the bootstrap key', () => {
  it('is idempotent across restarts and concurrent starts', async () => {
    const { url } = await createTestDatabase();
    const key = 'operator-chosen-bootstrap-key-0001';
    const config = { bootstrapApiKey: key };
    const [a, b] = await Promise.all([bootTestApp({ databaseUrl: url, config }), bootTestApp({ databaseUrl: url, config })]);
    await a.close();
    await b.close();
    const c = await bootTestApp({ databaseUrl: url, config });
    try {
      await c.http().get('/v1/api-keys').set(bearer(key)).expect(200);
      const counts = await withClient(url, async (db) => {
        const keys = await db.query('SELECT count(*)::int AS n FROM api_keys WHERE key_hash = $1', [hashApiKey(key)]);
        const ws = await db.query('SELECT count(*)::int AS n FROM workspaces');
        return { keys: keys.rows[0].n as number, workspaces: ws.rows[0].n as number };
      });
      expect(counts).toEqual({ keys: 1, workspaces: 1 });
    } finally {
      await c.close();
    }
  });

  it('a changed HERALD_API_KEY replaces the previous bootstrap key; member keys stay', async () => {
    const { url } = await createTestDatabase();
    const oldKey = 'first-bootstrap-key-000000';
    const newKey = 'second-bootstrap-key-00000';
    const first = await bootTestApp({ databaseUrl: url, config: { bootstrapApiKey: oldKey } });
    const member = (await first.http().post('/v1/api-keys').set(bearer(oldKey)).send({ name: 'CI' }).expect(201)).body.key as string;
    await first.close();

    const second = await bootTestApp({ databaseUrl: url, config: { bootstrapApiKey: newKey } });
    try {
      const refused = await second.http().get('/v1/api-keys').set(bearer(oldKey)).expect(401);
      expect(refused.body.message).toMatch(/invalid or revoked/i);
      await second.http().post('/v1/workspaces').set(bearer(oldKey)).send({ name: 'With the old key' }).expect(401);
      // The new key has the admin right; the workspace's other keys are untouched.
      await second.http().post('/v1/workspaces').set(bearer(newKey)).send({ name: 'With the new key' }).expect(201);
      const keys = (await second.http().get('/v1/api-keys').set(bearer(member)).expect(200)).body.data as {
        name: string;
        role: string;
        bootstrap: boolean;
      }[];
      expect(keys.map((k) => [k.name, k.role, k.bootstrap]).sort()).toEqual([
        ['CI', 'owner', false],
        ['HERALD_API_KEY', 'owner', true],
      ]);
    } finally {
      await second.close();
    }
  });

  it('a host restarting with the replaced value does not bring it back', async () => {
    const { url } = await createTestDatabase();
    const oldKey = 'rolled-back-bootstrap-0000';
    const newKey = 'rolled-forward-bootstrap-0';
    await (await bootTestApp({ databaseUrl: url, config: { bootstrapApiKey: oldKey } })).close();
    await (await bootTestApp({ databaseUrl: url, config: { bootstrapApiKey: newKey } })).close();
    // An outdated host (say, mid rolling deploy) starts again with the old value.
    const outdated = await bootTestApp({ databaseUrl: url, config: { bootstrapApiKey: oldKey } });
    try {
      await outdated.http().get('/v1/api-keys').set(bearer(oldKey)).expect(401);
      await outdated.http().post('/v1/workspaces').set(bearer(newKey)).send({ name: 'Still the admin' }).expect(201);
    } finally {
      await outdated.close();
    }
  });

  it('setting HERALD_API_KEY replaces the key printed at the first start', async () => {
    const { url } = await createTestDatabase();
    const { createApp } = await import('../src/app');
    const { testConfig } = await import('./support/config');
    const printed: string[] = [];
    await (await createApp(testConfig(url, { bootstrapApiKey: null }), { print: (s) => printed.push(s) })).close();
    const generated = /hk_[A-Za-z0-9_-]{43}/.exec(printed.join(''))?.[0];
    expect(generated).toBeDefined();
    const configured = await bootTestApp({ databaseUrl: url, config: { bootstrapApiKey: 'now-chosen-by-the-operator-1' } });
    try {
      await configured.http().get('/v1/api-keys').set(bearer(generated!)).expect(401);
      await configured.http().get('/v1/api-keys').set(bearer('now-chosen-by-the-operator-1')).expect(200);
    } finally {
      await configured.close();
    }
  });

  it('without HERALD_API_KEY, prints a generated key once, on the first start only', async () => {
    const { url } = await createTestDatabase();
    const { createApp } = await import('../src/app');
    const { testConfig } = await import('./support/config');
    const printed: string[] = [];
    const app1 = await createApp(testConfig(url, { bootstrapApiKey: null }), { print: (s) => printed.push(s) });
    await app1.close();
    const app2 = await createApp(testConfig(url, { bootstrapApiKey: null }), { print: (s) => printed.push(s) });
    try {
      expect(printed).toHaveLength(1);
      const key = /hk_[A-Za-z0-9_-]{43}/.exec(printed[0])?.[0];
      expect(key).toBeDefined();
      await app2.listen(0, '127.0.0.1');
      const res = await fetch(`${await app2.getUrl()}/v1/workspaces`, {
        method: 'POST',
        headers: { ...bearer(key!), 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'From the printed key' }),
      });
      expect(res.status).toBe(201);
    } finally {
      await app2.close();
    }
  });
});
