import { MastodonModule } from '../src/connectors/mastodon/mastodon.module';
import { MastodonApps } from '../src/connectors/mastodon/oauth/mastodon-apps';
import { OAuthConnectError } from '../src/connectors/oauth-connect.interface';
import { FakeMastodon, startFakeMastodon } from './support/fake-mastodon';
import { FakeMastodonOAuth, withOAuth } from './support/fake-mastodon-oauth';
import { useMedium } from './support/medium';

/**
 * Herald's registration on each Mastodon instance (MastodonApps on mastodon_apps), on a real
 * database against a loopback instance whose `POST /api/v1/apps` follows Mastodon's
 * documentation (test/support/fake-mastodon-oauth.ts). The page's flows over it:
 * test/settings-mastodon.test.ts.
 */
describe("Herald's registration per Mastodon instance", () => {
  const m = useMedium({ modules: [MastodonModule], config: { allowPrivateUrls: true } });
  let instance: FakeMastodon;
  let oauth: FakeMastodonOAuth;
  const callback = 'https://herald.example/settings/mastodon/callback';

  beforeEach(async () => {
    instance = await startFakeMastodon();
    oauth = withOAuth(instance);
  });
  afterEach(async () => {
    await instance?.close();
  });

  const rows = () =>
    m.sql<{ redirect_uri: string; client_id: string; client_secret: string }>(
      `SELECT redirect_uri, client_id, client_secret FROM mastodon_apps WHERE instance_url = $1 ORDER BY registered_at`,
      [instance.url],
    );

  it('registers once and reuses the registration; a new redirect URI (PUBLIC_URL moved) is registered apart', async () => {
    const apps = m.get(MastodonApps);
    const first = await apps.forFlow(instance.url, callback);
    expect(await apps.forFlow(instance.url, callback)).toEqual(first);
    expect(oauth.apps).toHaveLength(1);
    expect(first).toEqual({ clientId: oauth.apps[0].clientId, clientSecret: oauth.apps[0].clientSecret });

    const moved = await apps.forFlow(instance.url, 'https://herald.example.org/settings/mastodon/callback');
    expect(oauth.apps).toHaveLength(2);
    expect(oauth.apps[1].redirectUris).toEqual(['https://herald.example.org/settings/mastodon/callback']);
    expect(moved.clientId).toBe(oauth.apps[1].clientId);
    expect((await rows()).map((r) => r.redirect_uri)).toEqual([callback, 'https://herald.example.org/settings/mastodon/callback']);
    // Both secrets sealed: neither is in its row.
    for (const [i, row] of (await rows()).entries()) expect(row.client_secret).not.toContain(oauth.apps[i].clientSecret);
  });

  it('registers again when the kept secret does not open (HERALD_SECRET_KEY changed), and when the scopes differ', async () => {
    const apps = m.get(MastodonApps);
    await apps.forFlow(instance.url, callback);
    await m.sql(`UPDATE mastodon_apps SET client_secret = 'v1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA.AAAA' WHERE instance_url = $1`, [
      instance.url,
    ]);
    const again = await apps.forFlow(instance.url, callback);
    expect(oauth.apps).toHaveLength(2);
    expect(again.clientId).toBe(oauth.apps[1].clientId);

    await m.sql(`UPDATE mastodon_apps SET scopes = 'read write' WHERE instance_url = $1`, [instance.url]);
    await apps.forFlow(instance.url, callback);
    expect(oauth.apps).toHaveLength(3);
    expect((await rows()).map((r) => r.client_id)).toEqual([oauth.apps[2].clientId]);
  });

  it('keeps one registration when several flows register the same new instance at once, and every flow uses it', async () => {
    const apps = m.get(MastodonApps);
    oauth.holdRegistrations = 3;
    const got = await Promise.all([1, 2, 3].map(() => apps.forFlow(instance.url, callback)));
    expect(oauth.apps).toHaveLength(3);
    const [kept] = await rows();
    expect(got.map((g) => g.clientId)).toEqual([kept.client_id, kept.client_id, kept.client_id]);
    expect(await apps.forCallback(instance.url, callback, kept.client_id)).toEqual(got[0]);
    // A flow started with a registration replaced since cannot finish with it.
    expect(await apps.forCallback(instance.url, callback, 'another-client-id')).toBeNull();
  });

  it('says what went wrong with a server that is not Mastodon, without keeping anything', async () => {
    const apps = m.get(MastodonApps);
    instance.extensions.unshift((req, res) => {
      if (req.path !== '/api/v1/apps') return false;
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<h1>Not found</h1>');
      return true;
    });
    const refused = apps.forFlow(instance.url, callback);
    await expect(refused).rejects.toThrow(OAuthConnectError);
    await expect(refused).rejects.toThrow(
      `${instance.host} does not look like a Mastodon instance: it did not take Herald's app registration (POST /api/v1/apps answered HTTP 404)`,
    );
    expect(await rows()).toEqual([]);
  });
});
