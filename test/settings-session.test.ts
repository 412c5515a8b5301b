import { createHash } from 'node:crypto';
import request from 'supertest';
import { bootTestApp, TestApp } from './support/app';
import { withClient } from './support/database';
import { createWebhookAccount } from './support/engine';
import { csrfOf, loggedInAgent, setCookie, submitLogin } from './support/settings-http';
import { bearer } from './support/config';

/**
 * The settings page's sessions and form safety over HTTP (docs/settings.md): log in with an API
 * key sent in a POST body; a server-side session in PostgreSQL behind an httpOnly, SameSite=Strict
 * cookie; CSRF tokens on every form; refused keys say nothing about why and are slowed.
 */
describe('settings page: sessions and form safety', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await bootTestApp({ config: { allowPrivateUrls: true } });
  });
  afterAll(async () => {
    await t.close();
  });

  const accountStatus = async (id: string): Promise<string> =>
    (await t.http().get(`/v1/accounts/${id}`).set(bearer(t.adminKey))).body.status;

  it('sends a visitor without a session to the login, and back to the page they asked for after it', async () => {
    const agent = request.agent(t.app.getHttpServer());
    const res = await agent.get('/settings/failed-posts?provider=bluesky');
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/settings/login?next=%2Fsettings%2Ffailed-posts%3Fprovider%3Dbluesky');
    const form = await agent.get(res.headers.location);
    const login = await agent
      .post('/settings/login')
      .type('form')
      .send({ _csrf: csrfOf(form.text), apiKey: t.adminKey, next: '/settings/failed-posts?provider=bluesky' });
    expect(login.status).toBe(303);
    expect(login.headers.location).toBe('/settings/failed-posts?provider=bluesky');
  });

  it('opens a server-side session behind an httpOnly, SameSite=Strict cookie that is not the key', async () => {
    const agent = request.agent(t.app.getHttpServer());
    const res = await submitLogin(agent, t.adminKey);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/settings/accounts');
    const cookie = setCookie(res, 'herald_session')!;
    expect(cookie).toMatch(/; Path=\/settings/);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Strict/);
    expect(cookie).not.toMatch(/; Secure/); // PUBLIC_URL is http here
    const token = /^herald_session=([^;]+)/.exec(cookie)![1];
    expect(token).not.toContain(t.adminKey);
    // The database keeps only a hash of the cookie's token.
    const rows = await withClient(
      t.databaseUrl,
      async (db) => (await db.query(`SELECT token_hash FROM page_sessions`)).rows as { token_hash: Buffer }[],
    );
    expect(rows.some((r) => r.token_hash.equals(createHash('sha256').update(token).digest()))).toBe(true);
    expect(rows.some((r) => r.token_hash.toString('utf8').includes(token))).toBe(false);

    const page = await agent.get('/settings/accounts');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Connected accounts');
    expect(page.text).not.toContain(t.adminKey);
    expect(page.headers['cache-control']).toBe('no-store');
  });

  it('marks the cookies Secure when PUBLIC_URL is https', async () => {
    const https = await bootTestApp({
      databaseUrl: t.databaseUrl,
      config: { publicUrl: 'https://herald.example.com', bootstrapApiKey: t.adminKey },
    });
    try {
      const agent = request.agent(https.app.getHttpServer());
      const form = await agent.get('/settings/login');
      expect(setCookie(form, 'herald_login')).toMatch(/; Secure/);
      const res = await agent
        .post('/settings/login')
        .set('Cookie', setCookie(form, 'herald_login')!.split(';')[0])
        .type('form')
        .send({ _csrf: csrfOf(form.text), apiKey: t.adminKey });
      expect(res.status).toBe(303);
      expect(setCookie(res, 'herald_session')).toMatch(/; Secure/);
      expect(res.headers['strict-transport-security']).toMatch(/max-age=/);
    } finally {
      await https.close();
    }
  });

  it('refuses a wrong key without saying why, and slows repeated wrong keys from one address', async () => {
    const agent = request.agent(t.app.getHttpServer());
    await withClient(t.databaseUrl, (db) => db.query(`DELETE FROM login_throttle`));
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await submitLogin(agent, `hk_wrong-key-${i}`);
      statuses.push(res.status);
      expect(res.text).toContain('That API key was not accepted. Check it and try again.');
      expect(res.text).not.toContain(`hk_wrong-key-${i}`);
      expect(setCookie(res, 'herald_session')).toBeUndefined();
    }
    expect(statuses).toEqual([401, 401, 401, 401]);
    // The fourth wrong key blocks the next try for a second: even the right key is not looked at.
    const blocked = await submitLogin(agent, t.adminKey);
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(blocked.text).toContain('Too many wrong keys were tried from your address');
    expect(setCookie(blocked, 'herald_session')).toBeUndefined();
    await new Promise((r) => setTimeout(r, Number(blocked.headers['retry-after']) * 1000 + 100));
    const ok = await submitLogin(agent, t.adminKey);
    expect(ok.status).toBe(303);
    // A correct key does not clear the count (it proves nothing about the wrong ones): the next
    // wrong key blocks again at once.
    const left = await withClient(t.databaseUrl, async (db) => (await db.query(`SELECT failures FROM login_throttle`)).rows);
    expect(left).toEqual([{ failures: 4 }]);
    await withClient(t.databaseUrl, (db) => db.query(`DELETE FROM login_throttle`));
  });

  it('refuses a login form that did not come from the login page', async () => {
    const res = await request(t.app.getHttpServer()).post('/settings/login').type('form').send({ _csrf: 'made-up', apiKey: t.adminKey });
    expect(res.status).toBe(403);
    expect(setCookie(res, 'herald_session')).toBeUndefined();
  });

  it('never sends a person elsewhere after the login', async () => {
    const agent = request.agent(t.app.getHttpServer());
    const res = await submitLogin(agent, t.adminKey, 'https://evil.example/settings');
    expect(res.headers.location).toBe('/settings/accounts');
  });

  it("refuses a form without the session's CSRF token and changes nothing", async () => {
    const account = await createWebhookAccount(t, t.adminKey, 'http://127.0.0.1:9/hook');
    const { agent, csrf } = await loggedInAgent(t);
    const none = await agent.post(`/settings/accounts/${account.id}/disable`).type('form').send({});
    expect(none.status).toBe(403);
    expect(none.text).toContain('Nothing was changed');
    const wrong = await agent
      .post(`/settings/accounts/${account.id}/disable`)
      .type('form')
      .send({ _csrf: `${csrf.slice(0, -2)}xx` });
    expect(wrong.status).toBe(403);
    expect(await accountStatus(account.id)).toBe('active');
    // The same form with the token works.
    const ok = await agent.post(`/settings/accounts/${account.id}/disable`).type('form').send({ _csrf: csrf });
    expect(ok.status).toBe(303);
    expect(await accountStatus(account.id)).toBe('disabled');
  });

  it('sends a form that arrives without the session cookie (as from another site) to the login, changing nothing', async () => {
    const account = await createWebhookAccount(t, t.adminKey, 'http://127.0.0.1:9/hook');
    const { csrf } = await loggedInAgent(t);
    const res = await request(t.app.getHttpServer()).post(`/settings/accounts/${account.id}/disable`).type('form').send({ _csrf: csrf });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/settings/login?expired=1');
    expect(await accountStatus(account.id)).toBe('active');
  });

  it('logging out ends the session on the server, not only in the browser', async () => {
    const { agent, csrf } = await loggedInAgent(t);
    const cookie = (agent as unknown as { jar: { getCookie(name: string, opts: unknown): { value: string } | undefined } }).jar.getCookie(
      'herald_session',
      {
        domain: '127.0.0.1',
        path: '/settings',
        secure: false,
        script: false,
      },
    );
    const out = await agent.post('/settings/logout').type('form').send({ _csrf: csrf });
    expect(out.status).toBe(303);
    expect(out.headers.location).toBe('/settings/login?out=1');
    // The old cookie, replayed, no longer opens anything.
    const replay = await request(t.app.getHttpServer()).get('/settings/accounts').set('Cookie', `herald_session=${cookie!.value}`);
    expect(replay.status).toBe(303);
    expect(replay.headers.location).toMatch(/^\/settings\/login/);
  });

  it('ends the page sessions of an API key when the key is revoked', async () => {
    const created = await t.http().post('/v1/api-keys').set(bearer(t.adminKey)).send({ name: 'editor' });
    const { agent } = await loggedInAgent(t, created.body.key);
    expect((await agent.get('/settings/accounts')).status).toBe(200);
    await t.http().delete(`/v1/api-keys/${created.body.id}`).set(bearer(t.adminKey)).expect(204);
    const after = await agent.get('/settings/accounts');
    expect(after.status).toBe(303);
    expect(after.headers.location).toMatch(/^\/settings\/login/);
  });

  it('ends a session after its expiry', async () => {
    const { agent } = await loggedInAgent(t);
    await withClient(t.databaseUrl, (db) => db.query(`UPDATE page_sessions SET expires_at = created_at + interval '1 millisecond'`));
    const res = await agent.get('/settings/accounts');
    expect(res.status).toBe(303);
  });

  it('serves the page with a strict Content-Security-Policy and no inline script', async () => {
    const res = await request(t.app.getHttpServer()).get('/settings/login');
    const csp = res.headers['content-security-policy'];
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });
});
