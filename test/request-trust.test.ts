import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { bootTestApp, TestApp } from './support/app';
import { withClient } from './support/database';
import { csrfOf, loggedInAgent, setCookie, submitLogin } from './support/settings-http';
import { bearer } from './support/config';

/**
 * What a request is trusted with (docs/operations-security.md): wrong API keys on /v1 are slowed
 * down like the page's logins, in the same count (PostgreSQL, so every process applies it);
 * TRUST_PROXY decides whether X-Forwarded-For / X-Forwarded-Proto are believed; a page form the
 * browser says came from another site is refused even with a valid token.
 */
describe('wrong Bearer keys are slowed down with the page logins, in one count', () => {
  let t: TestApp;
  let second: TestApp;

  beforeAll(async () => {
    t = await bootTestApp();
    // A second Herald process on the same database.
    second = await bootTestApp({ databaseUrl: t.databaseUrl, config: { bootstrapApiKey: t.config.bootstrapApiKey } });
  });
  afterAll(async () => {
    await second.close();
    await t.close();
  });
  beforeEach(() => withClient(t.databaseUrl, (db) => db.query(`DELETE FROM login_throttle`)));

  it('answers 401 to the first wrong keys, then 429 with Retry-After, even to the right key, in every process; the right key clears it later', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await t
        .http()
        .get('/v1/api-keys')
        .set(bearer(`hk_wrong-${i}-${'0'.repeat(40)}`));
      statuses.push(res.status);
    }
    // Before: 401 every time, for ever. Now: three free, the fourth starts the slow-down.
    expect(statuses).toEqual([401, 401, 401, 401, 429, 429, 429, 429]);
    const blocked = await t.http().get('/v1/api-keys').set(bearer(t.adminKey));
    expect(blocked.status).toBe(429);
    expect(blocked.body).toEqual({
      statusCode: 429,
      error: 'Too Many Requests',
      message: expect.stringContaining('Too many wrong API keys'),
    });
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // The other process reads the same count.
    expect((await second.http().get('/v1/api-keys').set(bearer(t.adminKey))).status).toBe(429);

    await new Promise((r) => setTimeout(r, Number(blocked.headers['retry-after']) * 1000 + 100));
    await t.http().get('/v1/api-keys').set(bearer(t.adminKey)).expect(200);
    // The right key proves nothing about the wrong ones before it: the count stays until it is quiet.
    const left = await withClient(t.databaseUrl, async (db) => (await db.query(`SELECT failures FROM login_throttle`)).rows);
    expect(left).toEqual([{ failures: 4 }]);
  });

  it('does not let a valid key sent between wrong ones wipe their count, on the API or at the page login', async () => {
    // 3 wrong keys, 1 right one, again and again: before, the right key cleared the count and
    // 113 wrong keys went through without a 429.
    const api = async (key: string) => (await t.http().get('/v1/api-keys').set(bearer(key))).status;
    const wrong = (round: number, i: number) => `hk_wrong-${round}-${i}-${'0'.repeat(40)}`;
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push(await api(wrong(0, i)));
    statuses.push(await api(t.adminKey));
    statuses.push(await api(wrong(1, 0)));
    expect(statuses).toEqual([401, 401, 401, 200, 401]);
    // The fourth wrong key blocks: every try after it is refused unseen, the right key too. The
    // first block lasts 1 s, so the rest of the three rounds is sent at once: one after the
    // other, on a machine loaded eightfold, the block ran out before they were all in.
    const rest = [wrong(1, 1), wrong(1, 2), t.adminKey];
    for (let round = 2; round < 4; round++) rest.push(wrong(round, 0), wrong(round, 1), wrong(round, 2), t.adminKey);
    expect(await Promise.all(rest.map(api))).toEqual(Array(11).fill(429));

    await withClient(t.databaseUrl, (db) => db.query(`DELETE FROM login_throttle`));
    // The same at the page. The forms of the logins sent during the block are fetched first.
    const during = await Promise.all(
      ['hk_page-1-1', 'hk_page-1-2', t.adminKey].map(async (apiKey) => {
        const browser = request.agent(t.app.getHttpServer());
        const form = await browser.get('/settings/login');
        return () =>
          browser
            .post('/settings/login')
            .type('form')
            .send({ _csrf: csrfOf(form.text), apiKey });
      }),
    );
    const agent = request.agent(t.app.getHttpServer());
    const page: number[] = [];
    for (let i = 0; i < 3; i++) page.push((await submitLogin(agent, `hk_page-0-${i}`)).status);
    page.push((await submitLogin(request.agent(t.app.getHttpServer()), t.adminKey)).status);
    page.push((await submitLogin(agent, 'hk_page-1-0')).status);
    expect(page).toEqual([401, 401, 401, 303, 401]);
    expect((await Promise.all(during.map((send) => send()))).map((r) => r.status)).toEqual([429, 429, 429]);
  });

  it('counts wrong keys at the page login and on the API together', async () => {
    const agent = request.agent(t.app.getHttpServer());
    const later = request.agent(t.app.getHttpServer());
    const form = await later.get('/settings/login');
    for (let i = 0; i < 3; i++) expect((await submitLogin(agent, `hk_page-wrong-${i}`)).status).toBe(401);
    expect((await t.http().get('/v1/api-keys').set(bearer('hk_api-wrong-000000000000000000000000000'))).status).toBe(401);
    // Four wrong keys, three on the page and one on the API: both are slowed now (for the first
    // block's 1 s: the two tries go at once, the page's form fetched before).
    const [onApi, onPage] = await Promise.all([
      t.http().get('/v1/api-keys').set(bearer(t.adminKey)),
      later
        .post('/settings/login')
        .type('form')
        .send({ _csrf: csrfOf(form.text), apiKey: t.adminKey }),
    ]);
    expect([onApi.status, onPage.status]).toEqual([429, 429]);
  });

  it('does not count requests without a key (a health probe, a forgotten header)', async () => {
    for (let i = 0; i < 6; i++) await t.http().get('/v1/api-keys').expect(401);
    await t.http().get('/v1/api-keys').set(bearer(t.adminKey)).expect(200);
  });
});

describe('TRUST_PROXY', () => {
  let direct: TestApp;
  let proxied: TestApp;

  beforeAll(async () => {
    direct = await bootTestApp();
    // Behind a TLS-terminating proxy on loopback, with an http PUBLIC_URL.
    proxied = await bootTestApp({ config: { trustProxy: ['loopback'], publicUrl: 'http://herald.internal:3000' } });
  });
  afterAll(async () => {
    await proxied.close();
    await direct.close();
  });

  /** The login form and its post, the form's cookie carried by hand (the jar does not send a Secure one over plain http). */
  const loginWith = async (t: TestApp, headers: Record<string, string>) => {
    const form = await request(t.app.getHttpServer()).get('/settings/login').set(headers);
    const formCookie = setCookie(form, 'herald_login')!.split(';')[0];
    return request(t.app.getHttpServer())
      .post('/settings/login')
      .set(headers)
      .set('Cookie', formCookie)
      .type('form')
      .send({ _csrf: csrfOf(form.text), apiKey: t.adminKey });
  };

  it('makes cookies Secure when the trusted proxy says the client came over https', async () => {
    const res = await loginWith(proxied, { 'X-Forwarded-Proto': 'https' });
    expect(res.status).toBe(303);
    expect(setCookie(res, 'herald_session')).toMatch(/; Secure/);
    // Without it (the default), the header is a client's word: ignored.
    const plain = await loginWith(direct, { 'X-Forwarded-Proto': 'https' });
    expect(plain.status).toBe(303);
    expect(setCookie(plain, 'herald_session')).not.toMatch(/; Secure/);
  });

  it("counts wrong keys per forwarded client behind a trusted proxy, and ignores a client's own X-Forwarded-For otherwise", async () => {
    const from = (t: TestApp, ip: string, key: string) => t.http().get('/v1/api-keys').set(bearer(key)).set('X-Forwarded-For', ip);
    for (let i = 0; i < 4; i++) await from(proxied, '203.0.113.7', `hk_wrong-${i}-${'0'.repeat(40)}`).expect(401);
    expect((await from(proxied, '203.0.113.7', proxied.adminKey)).status).toBe(429);
    // Another client behind the same proxy is not blocked by that one.
    await from(proxied, '203.0.113.8', proxied.adminKey).expect(200);

    // Directly reachable: a changing X-Forwarded-For does not buy fresh guesses.
    for (let i = 0; i < 4; i++) await from(direct, `203.0.113.${10 + i}`, `hk_wrong-${i}-${'0'.repeat(40)}`).expect(401);
    expect((await from(direct, '203.0.113.99', direct.adminKey)).status).toBe(429);
  });
});

describe('page forms from another site', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await bootTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('are refused even with a valid token (Sec-Fetch-Site or Origin), and our own are accepted', async () => {
    const { agent, csrf } = await loggedInAgent(t);
    const post = (headers: Record<string, string>) =>
      agent.post('/settings/notifications/preview').set(headers).type('form').send({ _csrf: csrf });
    expect((await post({ 'Sec-Fetch-Site': 'cross-site' })).status).toBe(403);
    expect((await post({ Origin: 'https://evil.example' })).status).toBe(403);
    expect((await post({ 'Sec-Fetch-Site': 'same-site', Origin: 'https://other.herald.example' })).status).toBe(403);
    // Our own page's form: same-origin (browsers send Origin: null under our no-referrer policy).
    expect((await post({ 'Sec-Fetch-Site': 'same-origin', Origin: 'null' })).status).toBe(200);
    const { port } = t.app.getHttpServer().address() as AddressInfo;
    expect((await post({ Origin: `http://127.0.0.1:${port}` })).status).toBe(200);

    // The login and the forms used without a session too.
    const login = request.agent(t.app.getHttpServer());
    const form = await login.get('/settings/login');
    const refused = await login
      .post('/settings/login')
      .set('Sec-Fetch-Site', 'cross-site')
      .type('form')
      .send({ _csrf: csrfOf(form.text), apiKey: t.adminKey });
    expect(refused.status).toBe(403);
    expect(setCookie(refused, 'herald_session')).toBeUndefined();
    const forgot = await login.get('/settings/forgot-password');
    await login
      .post('/settings/forgot-password')
      .set('Origin', 'https://evil.example')
      .type('form')
      .send({ _csrf: csrfOf(forgot.text), email: 'someone@example.com' })
      .expect(403);
  });
});
