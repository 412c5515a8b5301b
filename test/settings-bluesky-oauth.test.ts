import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { withClient } from './support/database';
import { createPost, waitForJob } from './support/engine';
import { MailCatcher, mailConfig, saveNotificationSettings, startMailCatcher } from './support/mail';
import { makeImage, uploadImage } from './support/media';
import { SecretBox } from '../src/common/crypto/secret-box';
import { ServiceProcess } from './support/process';
import { bootPageApp, launchBrowser, logIn, newPage, PageApp } from './support/browser';
import { freePort } from './support/net';
import { startPds, TestBskyAccount, TestPdsHandle } from './support/pds';
import { PUBLIC_HOST_BROWSER_ARGS, PublicHttps, startPublicHttps } from './support/public-https';
import { bearer } from './support/config';

/**
 * "Connect with Bluesky" end to end: a real Chromium, the real PDS of @atproto/dev-env with its
 * own OAuth provider (its sign-in and consent pages), and Herald as a confidential client
 * (private_key_jwt, PAR, PKCE, DPoP) whose client metadata and JWKS the PDS fetches from Herald.
 *
 * The PDS's provider refuses a client_id that is not https or whose host is loopback, an IP
 * address, or a reserved name (.test, .local, .localhost, .invalid, .example): Herald is therefore
 * served as https://herald.home.arpa:<port> through a TLS proxy, a name mapped to 127.0.0.1 for
 * the PDS (a global undici dispatcher in this process) and for Chromium (host resolver rules);
 * see test/support/public-https.ts. Nothing else is bent: the provider fetches the metadata and
 * the JWKS from Herald and checks the client assertion against them.
 */
describe('settings page: Connect with Bluesky (OAuth), in a browser, against a real PDS', () => {
  let browser: Browser;
  let pds: TestPdsHandle;
  let front: PublicHttps;
  let t: PageApp;
  let context: BrowserContext;
  let page: Page;
  let alice: TestBskyAccount;
  let smtp: MailCatcher;

  beforeAll(async () => {
    pds = await startPds();
    alice = await pds.createAccount('alice');
    front = await startPublicHttps(await freePort());
    smtp = await startMailCatcher();
    t = await bootPageApp(
      {
        // Alerts go out at once (the notifier runs), to a real SMTP server.
        ...mailConfig(smtp.url),
        notifications: { enabled: true, pollIntervalMs: 100, sweepIntervalSeconds: 60 },
        publicUrl: front.url,
        bluesky: {
          oauthPrivateKey: null,
          oauthScope: 'atproto repo:app.bsky.feed.post?action=create blob:image/*',
          plcUrl: pds.network.plc.url,
          handleResolverUrl: pds.url,
        },
      },
      { engine: true },
    );
    front.target = Number(new URL(t.baseUrl).port);
    browser = await launchBrowser(PUBLIC_HOST_BROWSER_ARGS);
    ({ context, page } = await newPage(browser));
    await logIn(page, front.url, t.adminKey);
  }, 120_000);
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await t?.close();
    await front?.close();
    await pds?.close();
    await smtp?.close();
  });

  const visible = (l: Locator) => l.first().waitFor({ state: 'visible', timeout: 20_000 });
  const accounts = async () =>
    (await t.http().get('/v1/accounts').set(bearer(t.adminKey))).body.data as {
      id: string;
      name: string;
      status: string;
      statusReason: string | null;
      config: Record<string, unknown>;
    }[];

  /** Herald's connect form, then the PDS's own sign-in page and consent page, as a person goes through them. */
  async function signInAndAuthorize(password: string): Promise<void> {
    // Herald's page goes on to the authorization server the handle resolved to (the PDS here).
    await page.waitForURL(`${pds.url}/oauth/authorize?**`);
    await page.getByRole('textbox', { name: 'Password' }).fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await visible(page.getByText('Grant access to your', { exact: false }));
    await page.getByRole('button', { name: 'Authorize' }).click();
    // The callback's page goes on to the accounts page by itself.
    await page.waitForURL(`${front.url}/settings/accounts`);
  }

  it('connects through the PDS sign-in and consent pages, then posts through the OAuth session', async () => {
    await page.goto(`${front.url}/settings/accounts/connect/bluesky`);
    await page.getByLabel('Name in Herald').first().fill('Alice on Bluesky');
    await page.getByLabel('Handle or DID').first().fill(`@${alice.handle}`);
    await page.getByRole('button', { name: 'Connect with Bluesky' }).click();
    await signInAndAuthorize(alice.password);
    await visible(page.getByText('Bluesky account “Alice on Bluesky” connected with OAuth', { exact: false }));
    await visible(page.getByText(`@${alice.handle} (OAuth)`, { exact: false }));

    const [account] = (await accounts()).filter((a) => a.name === 'Alice on Bluesky');
    expect(account.status).toBe('active');
    expect(account.config).toMatchObject({ auth: 'oauth', did: alice.did, handle: alice.handle, service: pds.url });

    // The session is stored sealed: no token, no key in clear.
    const rows = await withClient(t.databaseUrl, (c) => c.query('SELECT did, session FROM bluesky_oauth_sessions'));
    expect(rows.rows).toHaveLength(1);
    expect(rows.rows[0].did).toBe(alice.did);
    expect(rows.rows[0].session).toMatch(/^v1\./);
    expect(rows.rows[0].session).not.toMatch(/refresh|token|"d"/);

    // A post with an image goes out through the OAuth session and is on the PDS.
    const media = await uploadImage(t, t.adminKey, await makeImage('png', 64, 48), 'A small test square');
    const post = await createPost(t, t.adminKey, {
      text: 'Hello over OAuth https://example.com #herald',
      media: [media],
      targets: [{ accountId: account.id }],
    });
    const job = await waitForJob<{ status: string; attempts: unknown[]; remoteId: string | null }>(
      t,
      t.adminKey,
      post.jobs[0].id,
      (j) => j.status === 'succeeded' || j.status === 'dead',
      60_000,
    );
    expect(job.status).toBe('succeeded');
    const rkey = job.remoteId!.split('/').pop()!;
    const record = await pds.network.pds.getAgent().com.atproto.repo.getRecord({ repo: alice.did, collection: 'app.bsky.feed.post', rkey });
    const value = record.data.value as { text: string; embed?: { $type: string; images: { alt: string }[] }; facets?: unknown[] };
    expect(value.text).toBe('Hello over OAuth https://example.com #herald');
    expect(value.embed?.$type).toBe('app.bsky.embed.images');
    expect(value.embed?.images.map((i) => i.alt)).toEqual(['A small test square']);
    expect(value.facets).toHaveLength(2);
  }, 180_000);

  it('makes the account need re-authentication with an alert when a refresh is refused for good; Reconnect with Bluesky resumes its post', async () => {
    await saveNotificationSettings(t, t.adminKey, { digest: { recipients: ['oncall@example.com'] } });
    const [account] = (await accounts()).filter((a) => a.name === 'Alice on Bluesky');
    // Alice ends Herald's access at her PDS (what revoking an app in the account's settings does:
    // its OAuth tokens are gone from the PDS's store)...
    await pds.network.pds.ctx.accountManager.db.db.deleteFrom('token').where('did', '=', alice.did).execute();
    // ...and Herald's access token has run out, so the next attempt starts with a refresh.
    const box = new SecretBox(t.config.secretKey);
    await withClient(t.databaseUrl, async (db) => {
      const row = (await db.query('SELECT id, session FROM bluesky_oauth_sessions')).rows[0] as { id: string; session: string };
      const context = `bluesky-oauth-session:${row.id}`;
      const session = box.decryptJson<{ tokenSet: { expires_at?: string } }>(row.session, context);
      session.tokenSet.expires_at = new Date(Date.now() - 60_000).toISOString();
      await db.query('UPDATE bluesky_oauth_sessions SET session = $2 WHERE id = $1', [row.id, box.encryptJson(session, context)]);
    });

    const post = await createPost(t, t.adminKey, { text: 'After the revocation', targets: [{ accountId: account.id }] });
    const [mail] = await smtp.waitFor(1, 30_000);
    expect(mail.parsed.subject).toBe('Herald: "Alice on Bluesky" (Bluesky) needs to be reconnected');
    const refused = (await accounts()).find((a) => a.id === account.id)!;
    expect(refused.status).toBe('needs_reauth');
    expect(refused.statusReason).toMatch(/ended Herald's OAuth session while logging in .*reconnect it with Bluesky/);
    // The library dropped the session the PDS refused.
    expect((await withClient(t.databaseUrl, (db) => db.query('SELECT 1 FROM bluesky_oauth_sessions'))).rowCount).toBe(0);
    const waiting = await waitForJob<{ status: string; attempts: unknown[] }>(t, t.adminKey, post.jobs[0].id, (j) => j.status === 'paused');
    expect(waiting.attempts).toHaveLength(1);

    // The person reconnects from the page: the PDS asks again, and the waiting post goes out.
    await page.goto(`${front.url}/settings/accounts/${account.id}/reconnect`);
    await page.getByRole('button', { name: 'Reconnect with Bluesky' }).click();
    // The PDS remembers this browser's sign-in and Alice's consent to these scopes: it may ask
    // again for either, or send her straight back.
    const password = page.getByRole('textbox', { name: 'Password' });
    const authorize = page.getByRole('button', { name: 'Authorize' });
    for (;;) {
      const next = await Promise.race([
        page.waitForURL(`${front.url}/settings/accounts`, { timeout: 30_000 }).then(
          () => 'back' as const,
          () => null,
        ),
        password.waitFor({ state: 'visible', timeout: 30_000 }).then(
          () => 'password' as const,
          () => null,
        ),
        authorize.waitFor({ state: 'visible', timeout: 30_000 }).then(
          () => 'consent' as const,
          () => null,
        ),
      ]);
      if (next === null) throw new Error(`stuck at ${page.url()} on the way back from the PDS`);
      if (next === 'back') break;
      if (next === 'password') {
        await password.fill(alice.password);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await password.waitFor({ state: 'detached', timeout: 30_000 });
      } else {
        await authorize.click();
        await authorize.waitFor({ state: 'detached', timeout: 30_000 });
      }
    }
    await visible(page.getByText('“Alice on Bluesky” reconnected. The post waiting for it is going out now.', { exact: false }));

    const done = await waitForJob<{ status: string; attempts: unknown[]; remoteId: string | null }>(
      t,
      t.adminKey,
      post.jobs[0].id,
      (j) => j.status === 'succeeded' || j.status === 'dead',
      60_000,
    );
    expect(done.status).toBe('succeeded');
    const rkey = done.remoteId!.split('/').pop()!;
    const record = await pds.network.pds.getAgent().com.atproto.repo.getRecord({ repo: alice.did, collection: 'app.bsky.feed.post', rkey });
    expect((record.data.value as { text: string }).text).toBe('After the revocation');
    expect((await accounts()).find((a) => a.id === account.id)!.status).toBe('active');
    // One session row again: the new one.
    expect((await withClient(t.databaseUrl, (db) => db.query('SELECT did FROM bluesky_oauth_sessions'))).rows).toEqual([
      { did: alice.did },
    ]);
  }, 180_000);

  /** Marks the stored access token as run out, so that the next use of the session refreshes it first. */
  async function expireStoredAccessToken(): Promise<void> {
    const box = new SecretBox(t.config.secretKey);
    await withClient(t.databaseUrl, async (db) => {
      const row = (await db.query('SELECT id, session FROM bluesky_oauth_sessions')).rows[0] as { id: string; session: string };
      const context = `bluesky-oauth-session:${row.id}`;
      const session = box.decryptJson<{ tokenSet: { expires_at?: string } }>(row.session, context);
      session.tokenSet.expires_at = new Date(Date.now() - 60_000).toISOString();
      await db.query('UPDATE bluesky_oauth_sessions SET session = $2 WHERE id = $1', [row.id, box.encryptJson(session, context)]);
    });
  }

  it('refreshes an expired session once when two Herald processes need it at the same moment', async () => {
    const [account] = (await accounts()).filter((a) => a.name === 'Alice on Bluesky');
    expect(account.status).toBe('active');
    // Two more Herald processes on the same database (the real service, dist/src/main.js).
    const env = {
      DATABASE_URL: t.databaseUrl,
      HERALD_API_KEY: t.adminKey,
      HERALD_SECRET_KEY: t.config.secretKey.toString('hex'),
      PUBLIC_URL: front.url,
      HERALD_ALLOW_PRIVATE_URLS: 'true',
      BLUESKY_PLC_URL: pds.network.plc.url,
      BLUESKY_HANDLE_RESOLVER_URL: pds.url,
      WORKER_ENABLED: 'false',
      NOTIFICATIONS_ENABLED: 'false',
      LOG_LEVEL: 'warn',
    };
    const processes = [ServiceProcess.start(env, await freePort()), ServiceProcess.start(env, await freePort())];
    // Refresh grants the PDS's OAuth provider serves, counted (the provider's own method, called as before).
    // (a protected method of OAuthProvider, reached through a narrower type).
    const provider = pds.network.pds.ctx.oauthProvider as unknown as { refreshTokenGrant: (...args: unknown[]) => Promise<unknown> };
    const grant = provider.refreshTokenGrant.bind(provider);
    let refreshes = 0;
    provider.refreshTokenGrant = (...args: unknown[]) => {
      refreshes += 1;
      return grant(...args);
    };
    try {
      await Promise.all(processes.map((p) => p.waitReady(120_000)));
      await expireStoredAccessToken();
      // Refresh tokens are single-use: had both processes refreshed, the second refresh would
      // have replayed a used token, and the PDS would have ended the whole session.
      const checks = await Promise.all(
        processes.map(async (p) => {
          const res = await fetch(`${p.url}/v1/accounts/${account.id}/verify`, { method: 'POST', headers: bearer(t.adminKey) });
          return { status: res.status, body: (await res.json()) as { ok: boolean; message: string } };
        }),
      );
      expect(checks.map((c) => [c.status, c.body.ok])).toEqual([
        [200, true],
        [200, true],
      ]);
      expect(refreshes).toBe(1);
      // The lease is given back, and the session still posts.
      expect((await withClient(t.databaseUrl, (db) => db.query('SELECT name FROM bluesky_oauth_locks'))).rowCount).toBe(0);
      const post = await createPost(t, t.adminKey, { text: 'After one refresh', targets: [{ accountId: account.id }] });
      const job = await waitForJob<{ status: string; attempts: unknown[] }>(
        t,
        t.adminKey,
        post.jobs[0].id,
        (j) => ['succeeded', 'dead'].includes(j.status),
        60_000,
      );
      expect(job.status).toBe('succeeded');
    } finally {
      provider.refreshTokenGrant = grant;
      await Promise.all(processes.map((p) => p.stop()));
    }
  }, 300_000);

  it('refuses to finish a connect whose editor was made a viewer while at the PDS, and makes no account', async () => {
    const bob = await pds.createAccount('bob');
    // An editor, invited by mail (this suite has a real SMTP server), joins on a browser of their own.
    await t.http().post('/v1/invitations').set(bearer(t.adminKey)).send({ email: 'eddie@example.com', role: 'editor' }).expect(201);
    const mail = (await smtp.waitFor(smtp.received.length + 1, 30_000)).find((m) => m.to.includes('eddie@example.com'))!;
    const link = /https?:\/\/\S+token=[A-Za-z0-9_-]{43}/.exec(mail.parsed.text ?? '')![0];
    const editor = await newPage(browser);
    try {
      const p = editor.page;
      await p.goto(link);
      await p.getByLabel('Your name').fill('Eddie Editor');
      await p.getByLabel('Password', { exact: true }).fill('editor password, long enough');
      await p.getByLabel('The password again').fill('editor password, long enough');
      await Promise.all([p.waitForURL(`${front.url}/settings/accounts`), p.getByRole('button', { name: 'Join' }).click()]);

      // The editor starts a connect and reaches the PDS's sign-in page...
      await p.goto(`${front.url}/settings/accounts/connect/bluesky`);
      await p.getByLabel('Name in Herald').first().fill('Bob, connected by a demoted editor');
      await p.getByLabel('Handle or DID').first().fill(bob.handle);
      await p.getByRole('button', { name: 'Connect with Bluesky' }).click();
      await p.waitForURL(`${pds.url}/oauth/authorize?**`);

      // ...and an owner makes them a viewer meanwhile.
      const people = (await t.http().get('/v1/people').set(bearer(t.adminKey)).expect(200)).body.data as { id: string; email: string }[];
      const eddie = people.find((x) => x.email === 'eddie@example.com')!;
      await t.http().patch(`/v1/people/${eddie.id}`).set(bearer(t.adminKey)).send({ role: 'viewer' }).expect(200);

      const sessionsBefore = (await withClient(t.databaseUrl, (db) => db.query('SELECT 1 FROM bluesky_oauth_sessions'))).rowCount;
      await p.getByRole('textbox', { name: 'Password' }).fill(bob.password);
      await p.getByRole('button', { name: 'Sign in' }).click();
      await visible(p.getByText('Grant access to your', { exact: false }));
      const [callback] = await Promise.all([
        p.waitForResponse((r) => r.url().startsWith(`${front.url}/settings/bluesky/callback?`)),
        p.getByRole('button', { name: 'Authorize' }).click(),
      ]);
      expect({ status: callback.status(), refused: (await callback.text()).includes('Bluesky not connected') }).toEqual({
        status: 403,
        refused: true,
      });
      await visible(p.getByText('Your role does not allow connecting accounts any more. Nothing was changed.'));
      expect((await accounts()).map((a) => a.name)).not.toContain('Bob, connected by a demoted editor');
      // No OAuth session was stored for it either: the code was never exchanged.
      expect((await withClient(t.databaseUrl, (db) => db.query('SELECT 1 FROM bluesky_oauth_sessions'))).rowCount).toBe(sessionsBefore);
    } finally {
      await editor.context.close();
    }
  }, 180_000);
});
