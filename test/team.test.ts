import request from 'supertest';
import { SessionsService } from '../src/people/sessions.service';
import { bootTestApp, TestApp } from './support/app';
import { withClient } from './support/database';
import { createWebhookAccount } from './support/engine';
import { lastOutboxMailTo, linkIn } from './support/outbox-mail';
import { acceptInvitation, createFirstPerson, personAgent, TEST_PASSWORD } from './support/people';
import { csrfOf } from './support/settings-http';
import { bearer } from './support/config';

/**
 * The team model over the API and the page's forms (issue 18): the operator's key cannot be
 * locked out, key roles, the first person, invitations, password login and its slow-down,
 * password resets, removal, and the audit trail. Mail goes to the outbox here (no SMTP_URL):
 * links are read from the .eml files, as an operator would (mail_outbox keeps no link in the
 * clear: test/tokens-at-rest.test.ts).
 */
describe('people, roles and the audit trail', () => {
  let t: TestApp;
  const quiet = { allowPrivateUrls: true, notifications: { enabled: false, pollIntervalMs: 1000, sweepIntervalSeconds: 60 } };

  beforeAll(async () => {
    t = await bootTestApp({ config: quiet });
  });
  afterAll(() => t?.close());

  const newKey = async (key: string, role: string, name = role) => {
    const res = await t.http().post('/v1/api-keys').set(bearer(key)).send({ name, role });
    expect(res.status).toBe(201);
    return res.body as { id: string; key: string; role: string };
  };
  const bootstrapKeyId = async () => {
    const keys = await t.http().get('/v1/api-keys?limit=200').set(bearer(t.adminKey)).expect(200);
    return (keys.body.data as { id: string; bootstrap: boolean }[]).find((k) => k.bootstrap)!.id;
  };
  const lastMailTo = (address: string) => lastOutboxMailTo(t, address);

  describe('the operator cannot be locked out ("a member locks out the admin")', () => {
    it('refuses every workspace key that tries to revoke the bootstrap key, and it keeps working', async () => {
      const member = await newKey(t.adminKey, 'owner', 'a member of the bootstrap workspace');
      const id = await bootstrapKeyId();
      const res = await t.http().delete(`/v1/api-keys/${id}`).set(bearer(member.key));
      expect(res.status).toBe(403);
      expect(res.body.message).toMatch(/bootstrap key cannot be revoked/);
      // Not even the bootstrap key itself, through the API.
      expect((await t.http().delete(`/v1/api-keys/${id}`).set(bearer(t.adminKey))).status).toBe(403);
      await t.http().post('/v1/workspaces').set(bearer(t.adminKey)).send({ name: 'Still the operator' }).expect(201);
    });

    it('restores a bootstrap key revoked through the API (by an earlier Herald) at the next start with the same HERALD_API_KEY', async () => {
      const databaseUrl = t.databaseUrl;
      // What an earlier version let a member do: the bootstrap key revoked, not replaced.
      await withClient(databaseUrl, (c) => c.query(`UPDATE api_keys SET revoked_at = now() WHERE bootstrap`));
      expect((await t.http().get('/v1/accounts').set(bearer(t.adminKey))).status).toBe(401);
      const again = await bootTestApp({ databaseUrl, config: { ...quiet, bootstrapApiKey: t.adminKey } });
      try {
        await again.http().post('/v1/workspaces').set(bearer(t.adminKey)).send({ name: 'Back again' }).expect(201);
        const audit = await again.http().get('/v1/audit?kind=api_key').set(bearer(t.adminKey)).expect(200);
        expect(audit.body.data[0]).toMatchObject({ action: 'restore', actor: { kind: 'system' } });
      } finally {
        await again.close();
      }
    });

    it('keeps a rotation: a replaced HERALD_API_KEY stays revoked when a host starts with it again', async () => {
      const databaseUrl = t.databaseUrl;
      const rotated = `rotated-operator-key-${Date.now()}`;
      const b = await bootTestApp({ databaseUrl, config: { ...quiet, bootstrapApiKey: rotated } });
      await b.close();
      expect((await t.http().get('/v1/accounts').set(bearer(t.adminKey))).status).toBe(401);
      const stale = await bootTestApp({ databaseUrl, config: { ...quiet, bootstrapApiKey: t.adminKey } });
      try {
        expect((await stale.http().get('/v1/accounts').set(bearer(t.adminKey))).status).toBe(401);
        await stale.http().post('/v1/workspaces').set(bearer(rotated)).send({ name: 'Rotated' }).expect(201);
      } finally {
        await stale.close();
      }
      // Back to the original value for the rest of this file: a new rotation to it.
      await withClient(databaseUrl, (c) =>
        c.query(
          `UPDATE api_keys SET revoked_at = NULL, replaced_by = NULL WHERE name = 'HERALD_API_KEY' AND key_hash = sha256($1::bytea)`,
          [Buffer.from(t.adminKey)],
        ),
      );
      await withClient(databaseUrl, (c) =>
        c.query(`UPDATE api_keys SET revoked_at = now() WHERE bootstrap AND key_hash = sha256($1::bytea)`, [Buffer.from(rotated)]),
      );
    });
  });

  describe('API keys carry a role', () => {
    let ws: { key: string };
    beforeAll(async () => {
      const res = await t.http().post('/v1/workspaces').set(bearer(t.adminKey)).send({ name: 'Keys' }).expect(201);
      expect(res.body.apiKey.role).toBe('owner');
      ws = { key: res.body.apiKey.key };
    });

    it('lets only owners create and revoke keys; an editor or a viewer gets 403', async () => {
      const editor = await newKey(ws.key, 'editor');
      const viewer = await newKey(ws.key, 'viewer');
      expect((await t.http().post('/v1/api-keys').set(bearer(editor.key)).send({ role: 'viewer' })).status).toBe(403);
      expect((await t.http().delete(`/v1/api-keys/${viewer.id}`).set(bearer(editor.key))).status).toBe(403);
      expect((await t.http().delete(`/v1/api-keys/${editor.id}`).set(bearer(viewer.key))).status).toBe(403);
      // The viewer reads, the editor edits.
      await t.http().get('/v1/api-keys').set(bearer(viewer.key)).expect(200);
      expect(
        (
          await t
            .http()
            .post('/v1/accounts')
            .set(bearer(viewer.key))
            .send({ provider: 'webhook', name: 'x', config: { url: 'http://127.0.0.1:9/h' } })
        ).status,
      ).toBe(403);
      await createWebhookAccount(t, editor.key, 'http://127.0.0.1:9/hook');
      await t.http().delete(`/v1/api-keys/${editor.id}`).set(bearer(ws.key)).expect(204);
      expect((await t.http().get('/v1/accounts').set(bearer(editor.key))).status).toBe(401);
      // Revoked keys count as wrong keys from this client (with the three above): forget them.
      await withClient(t.databaseUrl, (c) => c.query(`DELETE FROM login_throttle`));
    });

    it('refuses a role that does not exist', async () => {
      const res = await t.http().post('/v1/api-keys').set(bearer(ws.key)).send({ role: 'admin' });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/role/);
    });
  });

  describe('people', () => {
    let key: string;
    let ownerId: string;
    const owner = 'olga.owner@example.test';

    beforeAll(async () => {
      const res = await t.http().post('/v1/workspaces').set(bearer(t.adminKey)).send({ name: 'Team' }).expect(201);
      key = res.body.apiKey.key;
    });

    it('creates the first person with an owner key, once; later people come by invitation', async () => {
      const viewer = await newKey(key, 'viewer');
      expect(
        (await t.http().post('/v1/people').set(bearer(viewer.key)).send({ email: owner, name: 'Olga', password: TEST_PASSWORD })).status,
      ).toBe(403);
      const weak = await t.http().post('/v1/people').set(bearer(key)).send({ email: owner, name: 'Olga', password: 'short' });
      expect(weak.status).toBe(400);
      expect(weak.body.message).toMatch(/at least 10 characters/);
      ownerId = await createFirstPerson(t, key, 'Olga.Owner@Example.test', 'Olga');
      const second = await t
        .http()
        .post('/v1/people')
        .set(bearer(key))
        .send({ email: 'x@example.test', name: 'X', password: TEST_PASSWORD });
      expect(second.status).toBe(409);
      const people = await t.http().get('/v1/people').set(bearer(viewer.key)).expect(200);
      expect(people.body.data).toEqual([{ id: ownerId, email: owner, name: 'Olga', role: 'owner', createdAt: expect.any(String) }]);
      const hash = await withClient(t.databaseUrl, (c) =>
        c.query<{ h: string }>(`SELECT password_hash AS h FROM people WHERE id = $1`, [ownerId]),
      );
      expect(hash.rows[0].h).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
    });

    it('refuses a name that could pass for another label ("Name <email>", a bidi override) with a 400 naming the name', async () => {
      const spoof = await t.http().patch(`/v1/people/${ownerId}`).set(bearer(key)).send({ name: 'Olga <boss@example.test>' });
      expect(spoof.status).toBe(400);
      expect(spoof.body.message).toMatch(/^a name cannot hold < or > /);
      // Shown as "Olga boss@example.test": no bracket needed to pass for someone else.
      const reordered = await t.http().patch(`/v1/people/${ownerId}`).set(bearer(key)).send({ name: 'Olga \u202Etset.elpmaxe@ssob' });
      expect(reordered.status).toBe(400);
      expect(reordered.body.message).toBe(
        'a name cannot hold U+202E (right-to-left override): it changes the order in which a label reads',
      );
      const people = await t.http().get('/v1/people').set(bearer(key)).expect(200);
      expect(people.body.data.map((p: { name: string }) => p.name)).toEqual(['Olga']);
    });

    it('answers a wrong password exactly like an unknown address', async () => {
      const tryLogin = async (email: string, password: string) => {
        const agent = request.agent(t.app.getHttpServer());
        const form = await agent.get('/settings/login');
        const res = await agent
          .post('/settings/login')
          .type('form')
          .send({ _csrf: csrfOf(form.text), email, password });
        return {
          status: res.status,
          text: res.text
            .replace(/value="[^"]*"/g, '')
            .replace(/herald_login=[^;]+/g, '')
            .replace(new RegExp(email, 'g'), '<email>'),
        };
      };
      const wrong = await tryLogin(owner, 'not the password at all');
      const unknown = await tryLogin('nobody.here@example.test', 'not the password at all');
      expect(wrong.status).toBe(401);
      expect(wrong).toEqual(unknown);
      expect(wrong.text).toContain('That email address and password were not accepted.');
      await withClient(t.databaseUrl, (c) => c.query(`DELETE FROM login_throttle`));
    });

    it('slows down wrong passwords per address, whichever client they come from, and per client', async () => {
      const sessions = t.app.get(SessionsService);
      const now = new Date();
      for (let i = 0; i < 4; i++) {
        expect(await sessions.loginPerson(owner, 'wrong password!', `client-${i}`, now)).toEqual({ ok: false, reason: 'refused' });
      }
      // A fifth client, and even the right password: the address waits.
      expect(await sessions.loginPerson(owner, TEST_PASSWORD, 'client-new', now)).toEqual({
        ok: false,
        reason: 'throttled',
        retryAfterMs: 1_000,
      });
      const later = new Date(now.getTime() + 1_000);
      expect((await sessions.loginPerson(owner, TEST_PASSWORD, 'client-new', later)).ok).toBe(true);
      // Per client: wrong addresses from one client count for that client too.
      for (let i = 0; i < 4; i++) await sessions.loginPerson(`nobody-${i}@example.test`, 'wrong password!', 'one-client', now);
      expect(await sessions.loginPerson(owner, TEST_PASSWORD, 'one-client', now)).toMatchObject({ ok: false, reason: 'throttled' });
      await withClient(t.databaseUrl, (c) => c.query(`DELETE FROM login_throttle`));
    });

    it('invites with a role: a one-use link (shown to the owner without a mail server, and in the outbox), 7 days, name and password set on the page', async () => {
      const editorKey = await newKey(key, 'editor');
      expect(
        (await t.http().post('/v1/invitations').set(bearer(editorKey.key)).send({ email: 'e@example.test', role: 'viewer' })).status,
      ).toBe(403);
      const res = await t.http().post('/v1/invitations').set(bearer(key)).send({ email: 'Eddie@Example.test', role: 'editor' }).expect(201);
      expect(res.body).toMatchObject({ mailed: false, invitation: { email: 'eddie@example.test', role: 'editor', status: 'pending' } });
      const days = (Date.parse(res.body.invitation.expiresAt) - Date.parse(res.body.invitation.createdAt)) / 86_400_000;
      expect(days).toBeCloseTo(7, 3);
      const mail = await lastMailTo('eddie@example.test');
      expect(mail.kind).toBe('invitation');
      expect(linkIn(mail.text)).toBe(res.body.link);
      // Only the hash is stored.
      const token = new URL(res.body.link as string).searchParams.get('token')!;
      const stored = await withClient(t.databaseUrl, (c) =>
        c.query(`SELECT count(*)::int AS n FROM invitations WHERE token_hash::text LIKE $1`, [`%${token}%`]),
      );
      expect(stored.rows[0].n).toBe(0);

      const agent = await acceptInvitation(t, res.body.link as string, 'Eddie Editor');
      const accounts = await agent.get('/settings/accounts');
      expect(accounts.text).toContain('Eddie Editor &lt;eddie@example.test&gt;');
      // Used once.
      const again = await request(t.app.getHttpServer()).get(
        new URL(res.body.link as string).pathname + new URL(res.body.link as string).search,
      );
      expect(again.status).toBe(410);
      expect(again.text).toContain('This link was used already');
      const list = await t.http().get('/v1/invitations').set(bearer(key)).expect(200);
      expect(list.body.data.map((i: { email: string }) => i.email)).not.toContain('eddie@example.test');
      await personAgent(t, 'eddie@example.test');
    });

    it('keeps an owner among the people, and lets an owner change roles and remove people, whose open pages end at once', async () => {
      expect((await t.http().patch(`/v1/people/${ownerId}`).set(bearer(key)).send({ role: 'editor' })).status).toBe(409);
      expect((await t.http().delete(`/v1/people/${ownerId}`).set(bearer(key))).status).toBe(409);
      const people = (await t.http().get('/v1/people').set(bearer(key)).expect(200)).body.data as { id: string; email: string }[];
      const eddie = people.find((p) => p.email === 'eddie@example.test')!;
      const { agent } = await personAgent(t, 'eddie@example.test');
      await t.http().patch(`/v1/people/${eddie.id}`).set(bearer(key)).send({ role: 'viewer' }).expect(200);
      expect((await agent.get('/settings/accounts')).text).toContain('· viewer</p>');
      await t.http().delete(`/v1/people/${eddie.id}`).set(bearer(key)).expect(204);
      const after = await agent.get('/settings/accounts');
      expect(after.status).toBe(303);
      expect(after.headers.location).toMatch(/^\/settings\/login/);
      // And the login is refused like any wrong password.
      await expect(personAgent(t, 'eddie@example.test')).rejects.toThrow(/401/);
      await withClient(t.databaseUrl, (c) => c.query(`DELETE FROM login_throttle`));
    });

    it('resets a password by a one-use link valid an hour, which ends the other sessions', async () => {
      const first = await personAgent(t, owner);
      await t.http().post(`/v1/people/${ownerId}/password-reset`).set(bearer(key)).expect(200, { mailed: false });
      const mail = await lastMailTo(owner);
      expect(mail.kind).toBe('password_reset');
      const link = new URL(linkIn(mail.text));
      const expiry = await withClient(t.databaseUrl, (c) =>
        c.query<{ s: number }>(
          `SELECT extract(epoch FROM expires_at - created_at)::int AS s FROM password_resets WHERE person_id = $1 ORDER BY created_at DESC LIMIT 1`,
          [ownerId],
        ),
      );
      expect(expiry.rows[0].s).toBe(3600);
      const browser = request.agent(t.app.getHttpServer());
      const form = await browser.get(link.pathname + link.search);
      expect(form.status).toBe(200);
      const fresh = 'a brand new long password';
      const done = await browser
        .post('/settings/reset-password')
        .type('form')
        .send({ _csrf: csrfOf(form.text), token: link.searchParams.get('token'), password: fresh, confirm: fresh });
      expect(done.status).toBe(303);
      expect((await browser.get('/settings/accounts')).status).toBe(200);
      // The session opened before the reset has ended.
      expect((await first.agent.get('/settings/accounts')).status).toBe(303);
      // The link worked once; the old password no longer opens anything, the new one does.
      expect((await browser.get(link.pathname + link.search)).status).toBe(410);
      await expect(personAgent(t, owner)).rejects.toThrow(/401/);
      await personAgent(t, owner, fresh);
      await withClient(t.databaseUrl, (c) => c.query(`DELETE FROM login_throttle`));
    });

    it('records who changed what, without secrets: GET /v1/audit for owners, paged, by actor and by kind', async () => {
      const hook = await t
        .http()
        .post('/v1/accounts')
        .set(bearer(key))
        .send({
          provider: 'webhook',
          name: 'Audited',
          config: { url: 'http://127.0.0.1:9/a', headers: { Authorization: 'Bearer very-secret-header' } },
        })
        .expect(201);
      await t.http().patch(`/v1/accounts/${hook.body.id}`).set(bearer(key)).send({ status: 'disabled' }).expect(200);
      await t.http().post(`/v1/accounts/${hook.body.id}/rotate-secret`).set(bearer(key)).expect(200);
      const viewer = await newKey(key, 'viewer');
      expect((await t.http().get('/v1/audit').set(bearer(viewer.key))).status).toBe(403);
      const all = await t.http().get('/v1/audit?limit=200').set(bearer(key)).expect(200);
      const text = JSON.stringify(all.body);
      for (const secret of ['very-secret-header', hook.body.secret, TEST_PASSWORD, 'a brand new long password', '$argon2id'])
        expect(text).not.toContain(secret);
      const summaries = (all.body.data as { summary: string }[]).map((e) => e.summary);
      expect(summaries).toEqual(
        expect.arrayContaining([
          'Disabled the account “Audited”',
          'Rotated the signing secret of “Audited”',
          'Connected the webhook account “Audited”',
          'Invited eddie@example.test as editor',
          'Olga <olga.owner@example.test> set a new password with a reset link',
          expect.stringMatching(/^Removed Eddie Editor <eddie@example.test>/),
          expect.stringMatching(/^Eddie Editor <eddie@example.test> accepted the invitation/),
        ]),
      );
      // Filtered by kind and by actor (the person who joined), and paged with the list cursor.
      const byKind = await t.http().get('/v1/audit?kind=account').set(bearer(key)).expect(200);
      expect(new Set(byKind.body.data.map((e: { kind: string }) => e.kind))).toEqual(new Set(['account']));
      const joined = (all.body.data as { action: string; actor: { id: string } }[]).find((e) => e.action === 'join')!;
      const byActor = await t.http().get(`/v1/audit?actorId=${joined.actor.id}`).set(bearer(key)).expect(200);
      expect(byActor.body.data.every((e: { actor: { id: string } }) => e.actor.id === joined.actor.id)).toBe(true);
      expect(byActor.body.data.length).toBeGreaterThan(0);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: request.Response = await t
          .http()
          .get(`/v1/audit?limit=3${cursor ? `&cursor=${cursor}` : ''}`)
          .set(bearer(key))
          .expect(200);
        seen.push(...page.body.data.map((e: { id: string }) => e.id));
        cursor = page.body.nextCursor;
      } while (cursor);
      expect(seen).toEqual(all.body.data.map((e: { id: string }) => e.id));
    });
  });
});
