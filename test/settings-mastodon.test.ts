import { createHash } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { openCredentials } from '../src/accounts/account-credentials';
import { SecretBox } from '../src/common/crypto/secret-box';
import { bootPageApp, criticalViolations, launchBrowser, logIn, newPage, PageApp } from './support/browser';
import { bearer } from './support/config';
import { withClient } from './support/database';
import { createPost, waitForJob } from './support/engine';
import { FakeMastodon, startFakeMastodon } from './support/fake-mastodon';
import { FakeMastodonOAuth, withOAuth } from './support/fake-mastodon-oauth';
import { makeImage, uploadImage } from './support/media';
import { freePort } from './support/net';

/**
 * "Connect with Mastodon" in a real Chromium (issue 31): the authorization code flow against
 * loopback instances whose OAuth endpoints follow Mastodon's documentation
 * (test/support/fake-mastodon-oauth.ts, on test/support/fake-mastodon.ts). Herald is
 * http://localhost:<port>, the instances http://127.0.0.1:<port>: another site, so the
 * SameSite=Strict session cookie does not come back with the instance's redirect, as in
 * production. The instances are on loopback, so this Herald allows private addresses, as a test
 * or a LAN setup does; the refusal of private addresses has its own Herald below.
 *
 * One browser for the file; one Herald (with its worker) per describe.
 */

interface AccountRow {
  id: string;
  name: string;
  status: string;
  config: Record<string, unknown>;
}

/**
 * Herald's log lines. pino writes through process.stdout when its `write` is replaced (and to
 * the file descriptor otherwise): replaced before the app boots, every line of this file's
 * Herald (JSON, at trace level) is kept here.
 */
const logs: string[] = [];
/** The stream's own `write` (jest's process may already have one of its own), put back after the file. */
const ownWrite = Object.getOwnPropertyDescriptor(process.stdout, 'write');
const passOn = process.stdout.write.bind(process.stdout);
function keepLogs(): void {
  const write = (chunk: string | Uint8Array, ...rest: never[]): boolean => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    if (text.startsWith('{"level"')) {
      logs.push(text);
      return true;
    }
    return passOn(chunk, ...rest);
  };
  process.stdout.write = write;
}
function stopKeepingLogs(): void {
  if (ownWrite) Object.defineProperty(process.stdout, 'write', ownWrite);
  else Reflect.deleteProperty(process.stdout, 'write');
}

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  stopKeepingLogs();
});

describe('settings page: Connect with Mastodon, in a browser', () => {
  let t: PageApp;
  let mastodon: FakeMastodon;
  let oauth: FakeMastodonOAuth;
  let context: BrowserContext;
  let page: Page;
  /** Every page the browser was shown, for the secrets check at the end. */
  const pages: string[] = [];

  beforeAll(async () => {
    keepLogs();
    mastodon = await startFakeMastodon();
    oauth = withOAuth(mastodon);
    t = await bootPageApp({ logLevel: 'trace', logFormat: 'json' }, { engine: true });
    ({ context, page } = await newPage(browser));
    page.on(
      'load',
      () =>
        void page.content().then(
          (html) => pages.push(html),
          () => undefined,
        ),
    );
    await logIn(page, t.baseUrl, t.adminKey);
  });
  afterAll(async () => {
    await context?.close();
    await t?.close();
    await mastodon?.close();
  });

  beforeEach(() => {
    oauth.pkce = true;
    oauth.grantScopes = null;
    oauth.signedInAs = mastodon.accountId;
  });

  const visible = (l: Locator) => l.first().waitFor({ state: 'visible', timeout: 15_000 });
  const text = (p: Page, s: string) => visible(p.getByText(s, { exact: false }));
  const accounts = async () => (await t.http().get('/v1/accounts?limit=200').set(bearer(t.adminKey))).body.data as AccountRow[];
  const appRows = (instanceUrl: string) =>
    withClient(t.databaseUrl, async (db) => (await db.query(`SELECT * FROM mastodon_apps WHERE instance_url = $1`, [instanceUrl])).rows);

  /** From the connect page, through the "Continue" page, to the instance's consent page; returns the authorization request. */
  async function goToInstance(p: Page, fake: FakeMastodon, instance: string, name = ''): Promise<URLSearchParams> {
    const auth = fake === mastodon ? oauth : others.get(fake)!;
    await p.goto(`${t.baseUrl}/settings/accounts/connect/mastodon`);
    await p.getByLabel('Instance').first().fill(instance);
    await p.getByLabel('Name in Herald (optional)').first().fill(name);
    await p.getByRole('button', { name: 'Connect with Mastodon' }).click();
    await p.waitForURL(`${fake.url}/oauth/authorize?**`);
    // This browser's own request (two people may be on their way at once).
    const state = new URL(p.url()).searchParams.get('state');
    return auth.authorizations.find((a) => a.get('state') === state)!;
  }
  /** The OAuth side of the other instances of this describe. */
  const others = new Map<FakeMastodon, FakeMastodonOAuth>();

  it('connects an account through the instance: Herald registers itself there, PKCE (S256), the token saved through the connector', async () => {
    expect(oauth.apps).toHaveLength(0);
    const auth = await goToInstance(page, mastodon, mastodon.url);

    // Registered once, with Herald's callback and the three scopes.
    expect(oauth.apps).toHaveLength(1);
    const app = oauth.apps[0];
    expect(app).toMatchObject({ name: 'Herald', redirectUris: [`${t.baseUrl}/settings/mastodon/callback`] });
    expect(app.scopes).toEqual(['write:statuses', 'write:media', 'read:accounts']);
    expect(Object.fromEntries(auth)).toMatchObject({
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: `${t.baseUrl}/settings/mastodon/callback`,
      scope: 'write:statuses write:media read:accounts',
      code_challenge_method: 'S256',
    });
    expect(auth.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(auth.get('state')!.length).toBeGreaterThanOrEqual(43);
    expect(page.url()).not.toContain(app.clientSecret);
    await text(page, 'Signed in as @ada.');

    const exchanges = oauth.tokenRequests.length;
    await page.getByRole('button', { name: 'Authorize' }).click();
    await page.waitForURL(`${t.baseUrl}/settings/accounts`);
    await text(page, `Mastodon account “Ada Lovelace” connected (posting as @ada@${mastodon.host}).`);
    expect(await criticalViolations(page)).toEqual([]);

    // The code was exchanged once, with the secret and the verifier of the challenge.
    expect(oauth.tokenRequests.length).toBe(exchanges + 1);
    const exchange = oauth.tokenRequests[exchanges];
    expect(exchange.get('client_id')).toBe(app.clientId);
    expect(exchange.get('client_secret')).toBe(app.clientSecret);
    expect(exchange.get('redirect_uri')).toBe(`${t.baseUrl}/settings/mastodon/callback`);
    const verifier = exchange.get('code_verifier')!;
    expect(createHash('sha256').update(verifier).digest('base64url')).toBe(auth.get('code_challenge'));

    // The account as the API shows it: its name and handle from the instance, and its limits.
    const ada = (await accounts()).find((a) => a.name === 'Ada Lovelace')!;
    expect(ada).toMatchObject({ status: 'active', config: { instanceUrl: mastodon.url, accountId: mastodon.accountId, username: 'ada' } });
    expect(ada.config.limits).toMatchObject({ maxCharacters: 500, charactersReservedPerUrl: 23 });
    const card = page.locator('li.card', { has: page.getByRole('heading', { name: 'Ada Lovelace', exact: true }) });
    await visible(card.getByText(`@ada@${mastodon.host}`));

    // The token the instance issued is the account's (sealed); the registration's secret is sealed too.
    const token = oauth.issued[oauth.issued.length - 1].accessToken;
    const sealed = await withClient(
      t.databaseUrl,
      async (db) => (await db.query(`SELECT credentials FROM accounts WHERE id = $1`, [ada.id])).rows[0].credentials as string,
    );
    expect(openCredentials(t.app.get(SecretBox), ada.id, sealed)).toEqual({ accessToken: token });
    const rows = await appRows(mastodon.url);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      redirect_uri: `${t.baseUrl}/settings/mastodon/callback`,
      client_id: app.clientId,
      secret_expires_at: null,
    });
    expect(rows[0].client_secret).toMatch(/^v1\./);
    expect(rows[0].client_secret).not.toContain(app.clientSecret);
  });

  it('publishes a post with two images and a two-part thread to the connected account, once', async () => {
    const ada = (await accounts()).find((a) => a.name === 'Ada Lovelace')!;
    const a = await uploadImage(t, t.adminKey, await makeImage('png', 40, 30), 'a red square');
    const b = await uploadImage(t, t.adminKey, await makeImage('jpeg', 30, 40), 'a tall red rectangle');
    const post = await createPost(t, t.adminKey, {
      text: 'Connected through OAuth',
      media: [a, b],
      thread: [{ text: 'And the reply' }],
      targets: [{ accountId: ada.id }],
    });
    const job = await waitForJob<{ status: string; attempts: unknown[]; parts: { remoteId: string }[] }>(
      t,
      t.adminKey,
      post.jobs[0].id,
      (j) => ['succeeded', 'dead', 'paused'].includes(j.status),
    );
    expect(job.status).toBe('succeeded');
    expect(job.attempts).toHaveLength(1);

    const first = mastodon.posted('Connected through OAuth');
    const reply = mastodon.posted('And the reply');
    expect(first).toHaveLength(1);
    expect(reply).toHaveLength(1);
    expect(reply[0].inReplyToId).toBe(first[0].id);
    expect(job.parts.map((p) => p.remoteId)).toEqual([first[0].id, reply[0].id]);
    expect(first[0].mediaIds.map((id) => mastodon.media.get(id)!.description)).toEqual(['a red square', 'a tall red rectangle']);
    // Posted with the token the OAuth flow granted.
    const token = oauth.issued.find((i) => i.accountId === mastodon.accountId)!.accessToken;
    expect(mastodon.calls('statuses').at(-1)!.headers.authorization).toBe(`Bearer ${token}`);

    // What a person sees: the card's last success.
    await page.goto(`${t.baseUrl}/settings/accounts`);
    const card = page.locator('li.card', { has: page.getByRole('heading', { name: 'Ada Lovelace', exact: true }) });
    expect(await card.getByText('Last success').locator('..').innerText()).not.toContain('none yet');
  });

  it("connects a second account of the same instance with Herald's registration kept, under the name given", async () => {
    const bob = mastodon.addPerson('bob', 'Bob Babbage');
    oauth.signedInAs = bob;
    const auth = await goToInstance(page, mastodon, `${mastodon.url}/@bob`, 'Bob on Mastodon');
    expect(oauth.apps).toHaveLength(1);
    expect(auth.get('client_id')).toBe(oauth.apps[0].clientId);
    await page.getByRole('button', { name: 'Authorize' }).click();
    await text(page, `Mastodon account “Bob on Mastodon” connected (posting as @bob@${mastodon.host}).`);
    expect((await accounts()).find((a) => a.name === 'Bob on Mastodon')!.config).toMatchObject({ accountId: bob, username: 'bob' });
    expect(await appRows(mastodon.url)).toHaveLength(1);
  });

  it('lets two people connect a new instance at the same moment: one registration is kept, both connect with it', async () => {
    const second = await startFakeMastodon();
    const secondOAuth = withOAuth(second);
    others.set(second, secondOAuth);
    const otherContext = await browser.newContext({ locale: 'en-GB' });
    try {
      const other = await otherContext.newPage();
      await logIn(other, t.baseUrl, t.adminKey);
      // The instance answers no registration until both are waiting: both flows register.
      secondOAuth.holdRegistrations = 2;
      const [mine, theirs] = await Promise.all([
        goToInstance(page, second, second.url, 'Mine'),
        goToInstance(other, second, second.url, 'Theirs'),
      ]);
      expect(secondOAuth.apps).toHaveLength(2);
      // Both went on with the same one: the one Herald kept.
      const rows = await appRows(second.url);
      expect(rows).toHaveLength(1);
      expect(mine.get('client_id')).toBe(rows[0].client_id);
      expect(theirs.get('client_id')).toBe(rows[0].client_id);

      await page.getByRole('button', { name: 'Authorize' }).click();
      await text(page, 'Mastodon account “Mine” connected');
      await other.getByRole('button', { name: 'Authorize' }).click();
      await text(other, 'Mastodon account “Theirs” connected');
      expect((await accounts()).filter((a) => a.name === 'Mine' || a.name === 'Theirs')).toHaveLength(2);
    } finally {
      await otherContext.close();
    }
  });

  it('connects through an instance without PKCE (before 4.3: no metadata document) with the plain code flow and the client secret', async () => {
    const [older, olderOAuth] = [...others][0];
    olderOAuth.pkce = false;
    const auth = await goToInstance(page, older, older.url, 'Older instance');
    expect(older.requests.some((r) => r.path === '/.well-known/oauth-authorization-server')).toBe(true);
    expect(auth.has('code_challenge')).toBe(false);
    expect(auth.has('code_challenge_method')).toBe(false);
    const exchanges = olderOAuth.tokenRequests.length;
    await page.getByRole('button', { name: 'Authorize' }).click();
    await text(page, 'Mastodon account “Older instance” connected');
    const exchange = olderOAuth.tokenRequests[exchanges];
    expect(exchange.has('code_verifier')).toBe(false);
    expect(exchange.get('client_secret')).toBe(olderOAuth.apps.find((a) => a.clientId === exchange.get('client_id'))!.clientSecret);
    await older.close();
  });

  it('registers again when the instance says the secret expires before a flow could finish (client_secret_expires_at)', async () => {
    const expiring = await startFakeMastodon();
    const expiringOAuth = withOAuth(expiring);
    others.set(expiring, expiringOAuth);
    try {
      // A 4.4 instance whose secrets live ten minutes: less than the quarter of an hour a person may take.
      expiringOAuth.secretLifetimeSeconds = 600;
      await goToInstance(page, expiring, expiring.url, 'Expiring one');
      await page.getByRole('button', { name: 'Authorize' }).click();
      await text(page, 'Mastodon account “Expiring one” connected');
      const [before] = await appRows(expiring.url);
      expect(before.client_id).toBe(expiringOAuth.apps[0].clientId);
      expect(before.secret_expires_at).not.toBeNull();

      const auth = await goToInstance(page, expiring, expiring.url, 'Expiring two');
      expect(expiringOAuth.apps).toHaveLength(2);
      expect(auth.get('client_id')).toBe(expiringOAuth.apps[1].clientId);
      const after = await appRows(expiring.url);
      expect(after).toHaveLength(1);
      expect(after[0].client_id).toBe(expiringOAuth.apps[1].clientId);
      await page.getByRole('button', { name: 'Authorize' }).click();
      await text(page, 'Mastodon account “Expiring two” connected');
    } finally {
      await expiring.close();
    }
  });

  it('says plainly when the person denies access at the instance, and saves nothing', async () => {
    const count = (await accounts()).length;
    await goToInstance(page, mastodon, mastodon.url, 'Denied');
    await page.getByRole('button', { name: 'Deny' }).click();
    await text(
      page,
      `You denied Herald access at ${mastodon.host}; nothing was changed. Connect again when you want Herald to post for that account.`,
    );
    expect(await page.title()).toContain('Mastodon not connected');
    expect((await accounts()).length).toBe(count);
  });

  it('refuses the answer in another browser than the one that started the flow, and leaves the flow to its own browser', async () => {
    await goToInstance(page, mastodon, mastodon.url, 'Other browser');
    const consent = page.url();
    const otherContext = await browser.newContext();
    try {
      const other = await otherContext.newPage();
      await other.goto(consent);
      await other.getByRole('button', { name: 'Authorize' }).click();
      await text(other, 'This Mastodon answer reached a different browser than the one that started the connection. Nothing was changed.');
    } finally {
      await otherContext.close();
    }
    expect((await accounts()).some((a) => a.name === 'Other browser')).toBe(false);
    await page.goto(consent);
    await page.getByRole('button', { name: 'Authorize' }).click();
    await text(page, 'Mastodon account “Other browser” connected');
  });

  it('refuses a grant without every scope Herald asked for, and revokes the token it will not keep', async () => {
    oauth.grantScopes = ['read:accounts'];
    await goToInstance(page, mastodon, mastodon.url, 'Read only');
    await page.getByRole('button', { name: 'Authorize' }).click();
    await text(page, `${mastodon.host} did not grant write:statuses, write:media (granted: read:accounts)`);
    expect((await accounts()).some((a) => a.name === 'Read only')).toBe(false);
    expect(oauth.revoked).toContain(oauth.issued[oauth.issued.length - 1].accessToken);
  });

  it('refuses an address that is no Mastodon instance, or that cannot be reached, on the connect page', async () => {
    const notMastodon = http.createServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<h1>Not here</h1>');
    });
    await new Promise<void>((resolve) => notMastodon.listen(0, '127.0.0.1', resolve));
    try {
      const blog = `http://127.0.0.1:${(notMastodon.address() as AddressInfo).port}`;
      await page.goto(`${t.baseUrl}/settings/accounts/connect/mastodon`);
      await page.getByLabel('Instance').first().fill(blog);
      await page.getByRole('button', { name: 'Connect with Mastodon' }).click();
      await text(
        page,
        `does not look like a Mastodon instance: it did not take Herald's app registration (POST /api/v1/apps answered HTTP 404)`,
      );
      // Back on the form, with the address as it was typed.
      expect(new URL(page.url()).pathname).toBe('/settings/accounts/connect/mastodon');
      expect(await page.getByLabel('Instance').first().inputValue()).toBe(blog);
    } finally {
      await new Promise((r) => notMastodon.close(r));
    }
    const closed = `http://127.0.0.1:${await freePort()}`;
    await page.getByLabel('Instance').first().fill(closed);
    await page.getByRole('button', { name: 'Connect with Mastodon' }).click();
    await text(page, `${new URL(closed).host} could not be reached (ECONNREFUSED`);
  });

  it('reconnects an account whose token was revoked at its instance, and its waiting post goes out', async () => {
    const ada = (await accounts()).find((a) => a.name === 'Ada Lovelace')!;
    // A person revokes Herald's access in the instance's settings: the next status answers 401.
    const revoked = oauth.issued.find((i) => i.accountId === mastodon.accountId)!.accessToken;
    mastodon.revoke(revoked);
    const post = await createPost(t, t.adminKey, { text: 'Waiting for a person', targets: [{ accountId: ada.id }] });
    await waitForJob(t, t.adminKey, post.jobs[0].id, (j) => j.status === 'paused');
    expect((await accounts()).find((a) => a.id === ada.id)!.status).toBe('needs_reauth');

    await page.goto(`${t.baseUrl}/settings/accounts`);
    const card = page.locator('li.card', { has: page.getByRole('heading', { name: 'Ada Lovelace', exact: true }) });
    await card.getByRole('link', { name: /Reconnect/ }).click();
    await page.waitForURL(`${t.baseUrl}/settings/accounts/${ada.id}/reconnect`);
    expect(await criticalViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Reconnect with Mastodon' }).click();
    await page.waitForURL(`${mastodon.url}/oauth/authorize?**`);
    expect(oauth.authorizations.at(-1)!.get('client_id')).toBe(oauth.apps[0].clientId);
    await page.getByRole('button', { name: 'Authorize' }).click();
    await page.waitForURL(`${t.baseUrl}/settings/accounts`);
    await text(page, '“Ada Lovelace” reconnected. The post waiting for it is going out now.');
    await waitForJob(t, t.adminKey, post.jobs[0].id, (j) => j.status === 'succeeded');
    expect(mastodon.posted('Waiting for a person')).toHaveLength(1);

    const after = (await accounts()).find((a) => a.id === ada.id)!;
    expect(after.status).toBe('active');
    const sealed = await withClient(
      t.databaseUrl,
      async (db) => (await db.query(`SELECT credentials FROM accounts WHERE id = $1`, [ada.id])).rows[0].credentials as string,
    );
    expect(openCredentials(t.app.get(SecretBox), ada.id, sealed)).toEqual({
      accessToken: oauth.issued[oauth.issued.length - 1].accessToken,
    });
  });

  it('refuses a reconnect as another account of the instance, changing nothing', async () => {
    const ada = (await accounts()).find((a) => a.name === 'Ada Lovelace')!;
    oauth.signedInAs = [...mastodon.people.keys()].find((id) => mastodon.people.get(id)!.username === 'bob')!;
    await page.goto(`${t.baseUrl}/settings/accounts/${ada.id}/reconnect`);
    await page.getByRole('button', { name: 'Reconnect with Mastodon' }).click();
    await page.getByRole('button', { name: 'Authorize' }).click();
    await text(page, `You signed in to ${mastodon.host} as @bob@${mastodon.host}, but “Ada Lovelace” posts as @ada@${mastodon.host}`);
    expect((await accounts()).find((a) => a.id === ada.id)!.config.accountId).toBe(mastodon.accountId);
    expect(oauth.revoked).toContain(oauth.issued[oauth.issued.length - 1].accessToken);
  });

  it('never shows or logs a client secret, a code, a verifier or a token', () => {
    const secrets = [...oauth.apps, ...[...others.values()].flatMap((o) => o.apps)].map((a) => ['client secret', a.clientSecret]);
    const tokens = [oauth, ...others.values()].flatMap((o) => o.issued.map((i) => ['token', i.accessToken]));
    const exchanges = [oauth, ...others.values()].flatMap((o) =>
      o.tokenRequests.flatMap((r) => [
        ['code', r.get('code')!],
        ...(r.get('code_verifier') ? [['verifier', r.get('code_verifier')!]] : []),
      ]),
    );
    const all = [...secrets, ...tokens, ...exchanges];
    expect(secrets.length).toBeGreaterThanOrEqual(5);
    expect(tokens.length).toBeGreaterThanOrEqual(8);
    // The logs were kept (the check below can fail): the registrations and the callbacks are in them.
    const log = logs.join('');
    expect(log).toContain(`Herald is registered as an app on ${mastodon.host}`);
    expect(log).toContain('/settings/mastodon/callback');
    const pageText = pages.join('\n');
    expect(pages.length).toBeGreaterThan(10);
    for (const [what, value] of all) {
      expect({ what, inLogs: log.includes(value) }).toEqual({ what, inLogs: false });
      expect({ what, inPages: pageText.includes(value) }).toEqual({ what, inPages: false });
    }
  });
});

describe('settings page: Connect with Mastodon refuses private addresses', () => {
  let t: PageApp;
  let mastodon: FakeMastodon;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    mastodon = await startFakeMastodon();
    withOAuth(mastodon);
    t = await bootPageApp({ allowPrivateUrls: false });
    ({ context, page } = await newPage(browser));
    await logIn(page, t.baseUrl, t.adminKey);
  });
  afterAll(async () => {
    await context?.close();
    await t?.close();
    await mastodon?.close();
  });

  it('refuses a loopback instance, and a plain-http one, before sending it anything', async () => {
    const start = async (instance: string) => {
      await page.goto(`${t.baseUrl}/settings/accounts/connect/mastodon`);
      await page.getByLabel('Instance').first().fill(instance);
      await page.getByRole('button', { name: 'Connect with Mastodon' }).click();
    };
    await start(mastodon.host);
    await page
      .getByText(
        `Herald does not connect to ${mastodon.host}: 127.0.0.1 is a loopback address; set HERALD_ALLOW_PRIVATE_URLS=true to allow private destinations.`,
      )
      .waitFor();
    await start(mastodon.url);
    await page.getByText(`Mastodon instances are reached over https: give https://${mastodon.host}`).waitFor();
    expect(mastodon.requests).toEqual([]);
    expect(new URL(page.url()).pathname).toBe('/settings/accounts/connect/mastodon');
    expect(await page.getByLabel('Instance').first().inputValue()).toBe(mastodon.url);
  });
});
