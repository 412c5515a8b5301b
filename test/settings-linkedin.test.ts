import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { openCredentials } from '../src/accounts/account-credentials';
import { SecretBox } from '../src/common/crypto/secret-box';
import { bootPageApp, criticalViolations, launchBrowser, logIn, newPage, PageApp } from './support/browser';
import { withClient } from './support/database';
import { setAccountStatus } from './support/dlq';
import { FakeLinkedInOAuth, startFakeLinkedInOAuth } from './support/fake-linkedin-oauth';
import { bearer } from './support/config';

/**
 * "Connect with LinkedIn" in a real Chromium (issue 9): the authorization code flow against a
 * loopback server that follows LinkedIn's documented authorization and token endpoints
 * (test/support/fake-linkedin-oauth.ts). Herald is http://localhost:<port>, the fake is
 * http://127.0.0.1:<port>: another site, so the SameSite=Strict session cookie does not come
 * back with LinkedIn's redirect, as in production.
 *
 * One browser for the file; each describe has the app its configuration needs.
 */
let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe('settings page: Connect with LinkedIn, in a browser', () => {
  let t: PageApp;
  let linkedin: FakeLinkedInOAuth;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    linkedin = await startFakeLinkedInOAuth({ redirectUri: 'set below' });
    t = await bootPageApp({
      linkedin: {
        clientId: linkedin.clientId,
        clientSecret: linkedin.clientSecret,
        apiVersion: '202510',
        apiBaseUrl: linkedin.url,
        oauthBaseUrl: linkedin.url,
      },
    });
    linkedin.redirectUri = `${t.baseUrl}/settings/linkedin/callback`;
    ({ context, page } = await newPage(browser));
    await logIn(page, t.baseUrl, t.adminKey);
  });
  afterAll(async () => {
    await context?.close();
    await t?.close();
    await linkedin?.close();
  });

  beforeEach(() => {
    linkedin.grantScopes = null;
    linkedin.issueRefreshToken = false;
    linkedin.member = { sub: 'yrZCpj2Z12', name: 'Ada Lovelace' };
  });

  const visible = (l: Locator) => l.first().waitFor({ state: 'visible', timeout: 15_000 });
  const text = (s: string) => visible(page.getByText(s, { exact: false }));
  const accounts = async () =>
    (await t.http().get('/v1/accounts').set(bearer(t.adminKey))).body.data as {
      id: string;
      name: string;
      status: string;
      config: Record<string, unknown>;
    }[];

  /** From the connect page to LinkedIn's consent screen; returns the authorization request. */
  async function goToLinkedIn(name: string): Promise<URLSearchParams> {
    await page.goto(`${t.baseUrl}/settings/accounts/connect/linkedin`);
    await page.getByLabel('Name in Herald').first().fill(name);
    await page.getByRole('button', { name: 'Connect with LinkedIn' }).click();
    await page.waitForURL(`${linkedin.url}/oauth/v2/authorization?**`);
    return linkedin.authorizations[linkedin.authorizations.length - 1];
  }

  it('connects a LinkedIn member through the authorization code flow', async () => {
    const before = linkedin.tokenRequests.length;
    const auth = await goToLinkedIn('Ada on LinkedIn');
    expect(auth.get('scope')).toBe('openid profile w_member_social');
    expect(auth.get('redirect_uri')).toBe(`${t.baseUrl}/settings/linkedin/callback`);
    expect(auth.get('client_id')).toBe(linkedin.clientId);
    expect(auth.has('prompt')).toBe(false);
    // ≥ 128 random bits: 32 bytes base64url here.
    expect(auth.get('state')!.length).toBeGreaterThanOrEqual(43);
    expect(page.url()).not.toContain(linkedin.clientSecret);

    await page.getByRole('button', { name: 'Allow' }).click();
    // The callback's page goes straight on to the accounts page: a navigation from our own page,
    // so the Strict session cookie is sent again and the flash is there.
    await page.waitForURL(`${t.baseUrl}/settings/accounts`);
    await text('LinkedIn account “Ada on LinkedIn” connected (posting as urn:li:person:yrZCpj2Z12).');
    expect(await criticalViolations(page)).toEqual([]);

    // The code was exchanged once, with the client secret, at the configured token endpoint.
    expect(linkedin.tokenRequests.length).toBe(before + 1);
    const exchange = linkedin.tokenRequests[before];
    expect(Object.fromEntries(exchange)).toMatchObject({
      grant_type: 'authorization_code',
      client_id: linkedin.clientId,
      client_secret: linkedin.clientSecret,
      redirect_uri: linkedin.redirectUri,
    });
    const ada = (await accounts()).find((a) => a.name === 'Ada on LinkedIn')!;
    expect(ada.config).toMatchObject({ authorUrn: 'urn:li:person:yrZCpj2Z12', hasRefreshToken: false });
    const days = (Date.parse(ada.config.tokenExpiresAt as string) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(59.9);
    expect(days).toBeLessThan(60.1);

    // The card shows the token's expiry, and Check asks LinkedIn who the token belongs to.
    const card = page.locator('li.card', { has: page.getByRole('heading', { name: 'Ada on LinkedIn', exact: true }) });
    await visible(card.getByText('Access token expires on'));
    await card.getByRole('button', { name: /Check/ }).click();
    await text('the token is valid and belongs to urn:li:person:yrZCpj2Z12');
    expect(await page.content()).not.toContain(linkedin.issued[linkedin.issued.length - 1].accessToken);
  });

  it('warns that the configured LinkedIn version (202510) is retired: banner for owners, every LinkedIn card, the API, /health/ready', async () => {
    // 202510's sunset is LinkedIn's published 2026-10-15 (src/config/linkedin-versions.ts), so
    // this configuration is past it whatever day the suite runs.
    const warning =
      /^LinkedIn API version 202510 was retired on 2026-10-15: LinkedIn posts fail until you set LINKEDIN_VERSION to \d{6} \(the newest version this Herald knows\) and restart Herald$/;
    await page.goto(`${t.baseUrl}/settings/accounts`);
    const banner = page.getByTestId('linkedin-version-warning');
    await visible(banner);
    expect((await banner.innerText()).trim()).toMatch(warning);
    const linkedInCards = page.locator('li.card', { hasText: 'LinkedIn' });
    expect(await linkedInCards.count()).toBeGreaterThan(0);
    for (const card of await linkedInCards.all()) {
      expect(await card.getByRole('note').allInnerTexts()).toEqual(expect.arrayContaining([expect.stringMatching(warning)]));
    }
    const ada = (await t.http().get('/v1/accounts').set(bearer(t.adminKey))).body.data.find(
      (a: { name: string }) => a.name === 'Ada on LinkedIn',
    );
    expect(ada.warnings).toEqual([expect.stringMatching(warning)]);
    const ready = await t.http().get('/health/ready').expect(200);
    expect(ready.body.details.linkedinVersion).toEqual({
      status: 'up',
      version: '202510',
      sunset: '2026-10-15',
      message: expect.stringMatching(warning),
    });
  });

  it('refuses a callback whose state does not match, and a state used twice, changing nothing', async () => {
    const count = (await accounts()).length;
    const tokenCalls = linkedin.tokenRequests.length;
    const auth = await goToLinkedIn('Forged');
    // An attacker's link: a code with a state Herald never issued.
    await page.goto(`${t.baseUrl}/settings/linkedin/callback?code=AQforged&state=${'x'.repeat(43)}`);
    await text('does not match a connection started here');
    expect(await page.title()).toContain('LinkedIn not connected');

    // The real state, once the flow went through, cannot be replayed.
    await page.goto(`${linkedin.url}/oauth/v2/authorization?${auth.toString()}`);
    const answered = page.waitForResponse((r) => r.url().startsWith(`${t.baseUrl}/settings/linkedin/callback`));
    await page.getByRole('button', { name: 'Allow' }).click();
    const used = (await answered).url();
    await text('LinkedIn account “Forged” connected');
    await page.goto(used);
    await text('does not match a connection started here (unknown, expired or already used)');
    expect((await accounts()).length).toBe(count + 1);
    expect(linkedin.tokenRequests.length).toBe(tokenCalls + 1);
  });

  it('refuses the state in another browser than the one that started the flow, and leaves the flow to its own browser', async () => {
    await goToLinkedIn('Other browser');
    const consent = page.url();
    const other = await browser.newContext();
    const otherPage = await other.newPage();
    await otherPage.goto(consent);
    await otherPage.getByRole('button', { name: 'Allow' }).click();
    await otherPage.getByText('reached a different browser', { exact: false }).waitFor();
    await other.close();
    expect((await accounts()).some((a) => a.name === 'Other browser')).toBe(false);

    // Whoever saw the state could not spoil the flow: the browser that started it still finishes it.
    await page.goto(consent);
    await page.getByRole('button', { name: 'Allow' }).click();
    await text('LinkedIn account “Other browser” connected');
    expect((await accounts()).some((a) => a.name === 'Other browser')).toBe(true);
  });

  it('says plainly when the member cancels at LinkedIn', async () => {
    await goToLinkedIn('Cancelled');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await text('The LinkedIn connection was cancelled at LinkedIn; nothing was changed.');
    expect((await accounts()).some((a) => a.name === 'Cancelled')).toBe(false);
  });

  it('refuses a grant without every requested scope', async () => {
    linkedin.grantScopes = ['openid', 'profile'];
    await goToLinkedIn('Read only');
    await page.getByRole('button', { name: 'Allow' }).click();
    await text('LinkedIn did not grant w_member_social (granted: openid, profile)');
    expect((await accounts()).some((a) => a.name === 'Read only')).toBe(false);
  });

  it('reconnects an account, keeping its refresh token when LinkedIn sends none, and resumes it', async () => {
    linkedin.issueRefreshToken = true;
    await goToLinkedIn('Partner app');
    await page.getByRole('button', { name: 'Allow' }).click();
    await text('LinkedIn account “Partner app” connected');
    const firstRefresh = linkedin.issued[linkedin.issued.length - 1].refreshToken!;
    const account = (await accounts()).find((a) => a.name === 'Partner app')!;
    expect(account.config.hasRefreshToken).toBe(true);
    await setAccountStatus(t.databaseUrl, account.id, 'needs_reauth', 'the platform refused the credentials: HTTP 401');

    linkedin.issueRefreshToken = false;
    await page.goto(`${t.baseUrl}/settings/accounts/${account.id}/reconnect`);
    expect(await criticalViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Reconnect with LinkedIn' }).click();
    await page.waitForURL(`${linkedin.url}/oauth/v2/authorization?**`);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(`${t.baseUrl}/settings/accounts`);
    await text('“Partner app” reconnected.');

    const after = (await accounts()).find((a) => a.id === account.id)!;
    expect(after.status).toBe('active');
    expect(after.config.hasRefreshToken).toBe(true);
    const sealed = await withClient(
      t.databaseUrl,
      async (db) => (await db.query(`SELECT credentials FROM accounts WHERE id = $1`, [account.id])).rows[0].credentials as string,
    );
    const credentials = openCredentials(t.app.get(SecretBox), account.id, sealed);
    expect(credentials.refreshToken).toBe(firstRefresh);
    expect(credentials.accessToken).toBe(linkedin.issued[linkedin.issued.length - 1].accessToken);
  });

  it('refuses a reconnect as a different LinkedIn member', async () => {
    const ada = (await accounts()).find((a) => a.name === 'Ada on LinkedIn')!;
    linkedin.member = { sub: 'someoneElse9', name: 'Charles Babbage' };
    await page.goto(`${t.baseUrl}/settings/accounts/${ada.id}/reconnect`);
    await page.getByRole('button', { name: 'Reconnect with LinkedIn' }).click();
    await page.getByRole('button', { name: 'Allow' }).click();
    await text('You signed in to LinkedIn as urn:li:person:someoneElse9, but “Ada on LinkedIn” posts as urn:li:person:yrZCpj2Z12');
    expect((await accounts()).find((a) => a.id === ada.id)!.config.authorUrn).toBe('urn:li:person:yrZCpj2Z12');
  });
});

describe('settings page: LinkedIn without an OAuth app', () => {
  let t: PageApp;

  beforeAll(async () => {
    t = await bootPageApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('offers token paste instead, and saves a pasted token', async () => {
    const { context, page } = await newPage(browser);
    await logIn(page, t.baseUrl, t.adminKey);
    await page.goto(`${t.baseUrl}/settings/accounts/connect/linkedin`);
    expect(await page.getByRole('button', { name: 'Connect with LinkedIn' }).count()).toBe(0);
    await page.getByText('Paste an access token from the LinkedIn developer portal', { exact: false }).waitFor();
    expect(await criticalViolations(page)).toEqual([]);
    await page.getByLabel('Name in Herald').fill('Pasted');
    await page.getByLabel('Access token').fill('AQVpasted-token-value');
    await page.getByLabel('Post as').fill('urn:li:organization:2414183');
    await page.getByLabel('Token expires on (optional)').fill('2099-01-31');
    await page.getByRole('button', { name: 'Save the token' }).click();
    await page.waitForURL(`${t.baseUrl}/settings/accounts`);
    // The check runs against LinkedIn (unreachable here): the account is saved and the page says the check failed.
    await page.getByText('“Pasted” was saved, but the check failed', { exact: false }).waitFor();
    const res = await t.http().get('/v1/accounts').set(bearer(t.adminKey));
    expect(res.body.data[0].config).toMatchObject({ authorUrn: 'urn:li:organization:2414183', tokenExpiresAt: '2099-01-31T00:00:00.000Z' });
    expect(await page.content()).not.toContain('AQVpasted-token-value');
    await context.close();
  });
});
