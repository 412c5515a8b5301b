import request from 'supertest';
import { permissionFor, ROUTE_PERMISSIONS } from '../src/access/route-permissions';
import { allows, Caller, Permission } from '../src/access/roles';
import { bootTestApp, TestApp } from './support/app';
import { killJobs } from './support/dlq';
import { createPost } from './support/engine';
import { makeImage } from './support/media';
import { invitePerson, personAgent } from './support/people';
import {
  appRoutes,
  createFixtures,
  Fixtures,
  genericRequest,
  isErrorBody,
  requestFor,
  Route,
  routeKey,
  ROUTE_SPECS,
  send,
  urlFor,
  withFingerprints,
} from './support/route-table';
import { csrfOf, loggedInAgent, PageAgent } from './support/settings-http';
import { bearer } from './support/config';

/**
 * Every route of the API and of the settings page × every role, generated from the app's own
 * router and the one permission table (src/access/route-permissions.ts): a role the table
 * refuses gets 403 and not one row changes anywhere; a role it allows gets through. A route
 * added to the router without an entry in the table fails the first test by name.
 */
type RoleName = 'owner' | 'editor' | 'viewer';
const ROLES: RoleName[] = ['viewer', 'editor', 'owner'];
const caller = (role: RoleName): Caller => ({ role, bootstrap: false });
const permission = (r: Route): Permission => {
  const p = permissionFor(r.method, r.path);
  if (!p) throw new Error(`${routeKey(r)} has no entry in src/access/route-permissions.ts`);
  return p;
};
// `@Get()` of a controller is in the router twice, with and without a trailing slash: one route.
/** The page's answer to a role that may not: "Only … may do this; you are logged in as viewer. Nothing was changed." */
const ROLE_REFUSED = /may do this; you are logged in as \w+\. Nothing was changed\./;
const unique = (routes: Route[]) => [
  ...new Map(
    routes.map((r) => ({ ...r, path: r.path.length > 1 ? r.path.replace(/\/$/, '') : r.path })).map((r) => [routeKey(r), r]),
  ).values(),
];

describe('roles on every route of the API and the page', () => {
  let t: TestApp;
  let f: Fixtures;
  let api: Route[];
  let page: Route[];
  let mcp: Route[];
  let images: { png: Buffer };

  beforeAll(async () => {
    // No mail sender in the background: a fingerprint sees only what the request under test wrote.
    t = await bootTestApp({
      config: { allowPrivateUrls: true, notifications: { enabled: false, pollIntervalMs: 1000, sweepIntervalSeconds: 60 } },
    });
    images = { png: await makeImage('png') };
    f = await createFixtures(t, 'Roles');
    api = unique(appRoutes(t, '/v1/'));
    // The client review page (/review/:token) is the page's too: outside /settings, public.
    page = unique([...appRoutes(t, '/settings/'), ...appRoutes(t, '/settings'), ...appRoutes(t, '/review/')]).filter(
      (r) => r.path.startsWith('/settings') || r.path.startsWith('/review/'),
    );
    mcp = unique(appRoutes(t, '/mcp'));
  });
  afterAll(() => t.close());

  const keyOf = (role: RoleName, fx: Fixtures = f) => (role === 'owner' ? fx.key : role === 'editor' ? fx.editorKey : fx.viewerKey);

  it('has every route of the router in the permission table, and nothing else in it', () => {
    const routed = [...api, ...page, ...mcp].map(routeKey);
    expect(routed.length).toBeGreaterThanOrEqual(90);
    // A new route: decide who may use it in src/access/route-permissions.ts.
    expect(routed.filter((k) => !(k in ROUTE_PERMISSIONS))).toEqual([]);
    expect(Object.keys(ROUTE_PERMISSIONS).filter((k) => !routed.includes(k))).toEqual([]);
  });

  it('answers 403, changing nothing, to every API key whose role the table refuses, on every /v1 route', async () => {
    const problems: string[] = [];
    let refusals = 0;
    await withFingerprints(t.databaseUrl, async (fingerprint) => {
      for (const route of api) {
        for (const role of ROLES) {
          if (allows(caller(role), permission(route))) continue;
          const spec = requestFor(route, f, images);
          const before = await fingerprint();
          const res = await send(t, route, urlFor(route, spec), spec, bearer(keyOf(role)));
          refusals++;
          if (res.status !== 403 || !isErrorBody(res.body, 403))
            problems.push(`${routeKey(route)} as ${role}: ${res.status} ${res.text.slice(0, 200)}`);
          if (JSON.stringify(await fingerprint()) !== JSON.stringify(before)) problems.push(`${routeKey(route)} as ${role}: rows changed`);
        }
      }
    });
    expect(problems).toEqual([]);
    expect(refusals).toBeGreaterThanOrEqual(35);
  });

  it('lets the lowest permitted role through on every /v1 route (fresh things for each change), and every higher one', async () => {
    const problems: string[] = [];
    // Higher roles change things of their own too, so the page's tests below keep theirs.
    const spare = await createFixtures(t, 'Higher roles');
    for (const route of api) {
      const p = permission(route);
      const permitted = ROLES.filter((r) => allows(caller(r), p));
      if (p === 'instance') {
        // Beyond every workspace role: only the operator's bootstrap key.
        expect(permitted).toEqual([]);
        const spec = requestFor(route, f, images);
        const res = await send(t, route, urlFor(route, spec), spec, bearer(t.adminKey));
        if (res.status >= 300) problems.push(`${routeKey(route)} as the bootstrap key: ${res.status}`);
        continue;
      }
      const changes = route.method !== 'get';
      for (const [i, role] of permitted.entries()) {
        // The lowest permitted role on things of its own (a change may use them up); the
        // others on spare ones, where a 404 (gone) still shows the role was let in.
        const fx = changes && i === 0 ? await createFixtures(t, `Allowed ${routeKey(route)}`) : changes ? spare : f;
        const spec = requestFor(route, fx, images);
        const res = await send(t, route, urlFor(route, spec), spec, bearer(keyOf(role, fx)));
        const expected = ROUTE_SPECS[routeKey(route)]?.permittedStatus?.status;
        const ok = i === 0 || !changes ? (expected ? res.status === expected : res.status < 300) : res.status !== 403 && res.status < 500;
        if (!ok) problems.push(`${routeKey(route)} as ${role}: ${res.status} ${res.text.slice(0, 200)}`);
      }
    }
    expect(problems).toEqual([]);
  }, 900_000);

  it('lets every role reach the MCP server at /mcp (each tool then holds the key to its own route: test/mcp.test.ts)', async () => {
    expect(mcp.map(routeKey).sort()).toEqual(['DELETE /mcp', 'GET /mcp', 'POST /mcp']);
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'roles', version: '1' } },
    };
    const accept = { Accept: 'application/json, text/event-stream' };
    for (const role of ROLES) {
      expect(permission({ method: 'post', path: '/mcp' })).toBe('read');
      const res = await t
        .http()
        .post('/mcp')
        .set(accept)
        .set(bearer(keyOf(role)))
        .send(initialize);
      expect({ role, status: res.status, server: res.body?.result?.serverInfo?.name }).toEqual({ role, status: 200, server: 'herald' });
      // Stateless: no stream to open, no session to end, for any role.
      for (const method of ['get', 'delete'] as const) {
        const agent = t.http();
        const res = await (method === 'get' ? agent.get('/mcp') : agent.delete('/mcp')).set(accept).set(bearer(keyOf(role)));
        expect({ role, method, status: res.status }).toEqual({ role, method, status: 405 });
      }
    }
  });

  describe('the settings page', () => {
    type Session = { name: string; role: RoleName; agent: PageAgent; csrf: string };
    const sessions: Session[] = [];

    beforeAll(async () => {
      for (const role of ROLES) {
        const { agent, csrf } = await loggedInAgent(t, keyOf(role));
        sessions.push({ name: `${role} key`, role, agent, csrf });
      }
      // People: the fixtures' owner and editor, and a viewer invited here.
      const owner = await personAgent(t, (await emailOf(f.ownerPersonId))!);
      sessions.push({ name: 'owner person', role: 'owner', ...owner });
      const editor = await personAgent(t, (await emailOf(f.personId))!);
      sessions.push({ name: 'editor person', role: 'editor', ...editor });
      await invitePerson(t, f.key, 'viewer-person@example.test', 'viewer', 'Vera Viewer');
      const viewer = await personAgent(t, 'viewer-person@example.test');
      sessions.push({ name: 'viewer person', role: 'viewer', ...viewer });
    });

    async function emailOf(id: string): Promise<string | undefined> {
      const people = await t.http().get('/v1/people?limit=200').set(bearer(f.key)).expect(200);
      return (people.body.data as { id: string; email: string }[]).find((p) => p.id === id)?.email;
    }

    const urlOf = (route: Route) => urlFor(route, genericRequest(route, f), { provider: 'webhook', hash: 'x', name: 'settings.css' });
    const sendPage = (s: Session, route: Route) =>
      route.method === 'get' ? s.agent.get(urlOf(route)) : s.agent.post(urlOf(route)).type('form').send({ _csrf: s.csrf });
    // Every request of a session touches its own row (idle expiry, the next flash message).
    const withoutSessions = (print: Record<string, string>) =>
      Object.fromEntries(Object.entries(print).filter(([table]) => !/session/.test(table)));

    it('answers 403, changing nothing, to every session whose role the table refuses, on every page and form', async () => {
      const problems: string[] = [];
      let refusals = 0;
      await withFingerprints(t.databaseUrl, async (fingerprint) => {
        for (const route of page) {
          for (const s of sessions) {
            if (allows(caller(s.role), permission(route))) continue;
            const before = withoutSessions(await fingerprint());
            const res = await sendPage(s, route);
            refusals++;
            if (res.status !== 403 || !ROLE_REFUSED.test(res.text)) problems.push(`${routeKey(route)} as ${s.name}: ${res.status}`);
            if (JSON.stringify(withoutSessions(await fingerprint())) !== JSON.stringify(before))
              problems.push(`${routeKey(route)} as ${s.name}: rows changed`);
          }
        }
      });
      expect(problems).toEqual([]);
      expect(refusals).toBeGreaterThanOrEqual(70);
    });

    it('lets every session whose role the table allows through every page and form (reads first, then changes)', async () => {
      const problems: string[] = [];
      // Changes that end what the later ones need (removing, revoking) go last.
      const order = (r: Route) => (r.method === 'get' ? 0 : /remove|revoke|logout/.test(r.path) ? 2 : 1);
      const routes = [...page].sort((a, b) => order(a) - order(b));
      for (const route of routes) {
        for (const s of sessions) {
          if (!allows(caller(s.role), permission(route)) || /logout|remove/.test(route.path)) continue;
          const res = await sendPage(s, route);
          const toLogin = res.status === 303 && /\/settings\/login/.test(String(res.headers.location));
          // A public form sent without its own form cookie is refused as cross-site (CSRF), not for the role.
          if ((res.status === 403 && ROLE_REFUSED.test(res.text)) || res.status >= 500 || (toLogin && permission(route) !== 'public'))
            problems.push(`${routeKey(route)} as ${s.name}: ${res.status} ${String(res.headers.location ?? '')}`);
        }
      }
      expect(problems).toEqual([]);
    });

    it('shows a viewer no change button anywhere a viewer can go, and an editor no owner button', async () => {
      const pages = [
        '/settings/accounts',
        '/settings/failed-posts',
        `/settings/failed-posts/${f.deadJobId}`,
        '/settings/posts',
        '/settings/calendar',
        '/settings/queue',
        `/settings/queue/accounts/${f.accountId}`,
        '/settings/notifications',
        '/settings/team',
      ];
      const viewer = sessions.find((s) => s.name === 'viewer person')!;
      const editor = sessions.find((s) => s.name === 'editor person')!;
      const owner = sessions.find((s) => s.name === 'owner person')!;
      const formsOf = (html: string) =>
        [...html.matchAll(/<form method="post" action="([^"]+)"/g)]
          .map((m) => m[1])
          .filter((a) => a !== '/settings/logout' && !a.endsWith('/preview'));
      for (const path of pages) {
        const v = await viewer.agent.get(path);
        expect(v.status).toBe(200);
        expect({ path, forms: formsOf(v.text) }).toEqual({ path, forms: [] });
        // Each form an editor is shown is one the table lets an editor send.
        const e = await editor.agent.get(path);
        for (const action of formsOf(e.text)) {
          const route = page.find((r) => r.method === 'post' && new RegExp(`^${r.path.replace(/:[^/]+/g, '[^/]+')}$`).test(action));
          expect({ action, allowed: route ? allows(caller('editor'), permission(route)) : 'no such route' }).toEqual({
            action,
            allowed: true,
          });
        }
      }
      // The owner sees the forms the others do not (so the checks above can fail).
      expect((await owner.agent.get('/settings/team')).text).toContain('action="/settings/team/invitations"');
      expect((await editor.agent.get('/settings/accounts')).text).toMatch(
        new RegExp(`action="/settings/accounts/${f.accountId}/(disable|enable)"`),
      );
      expect((await owner.agent.get('/settings/accounts')).text).toContain(`/settings/accounts/${f.accountId}/remove`);
      expect((await editor.agent.get('/settings/accounts')).text).not.toContain(`/settings/accounts/${f.accountId}/remove`);
    });
  });

  it('keeps the table in the OpenAPI document: who may call each operation, and the 403 of the others', async () => {
    const doc = (await request(t.app.getHttpServer()).get('/docs-json').expect(200)).body as {
      paths: Record<string, Record<string, { 'x-herald-permission'?: string; responses: Record<string, unknown> }>>;
    };
    for (const route of api) {
      const op = doc.paths[route.path.replace(/:([A-Za-z]+)/g, '{$1}')]?.[route.method];
      expect({ route: routeKey(route), permission: op?.['x-herald-permission'] }).toEqual({
        route: routeKey(route),
        permission: permission(route),
      });
      if (permission(route) !== 'read') expect(Object.keys(op.responses)).toContain('403');
    }
  });

  it('documents the same table in docs/api.md', async () => {
    const fs = await import('node:fs');
    const path = await import('node:path');
    const doc = fs.readFileSync(path.resolve(__dirname, '../docs/api.md'), 'utf8');
    const rows = new Map([...doc.matchAll(/^\| `([A-Z]+ \/v1\/[^`]+)` +\| (\w+) +\|/gm)].map((m) => [m[1], m[2]]));
    const table = Object.fromEntries(Object.entries(ROUTE_PERMISSIONS).filter(([k]) => k.includes(' /v1/')));
    expect(Object.fromEntries(rows)).toEqual(table);
  });

  it("documents the page's rows of the same table in docs/settings.md", async () => {
    const fs = await import('node:fs');
    const path = await import('node:path');
    const doc = fs.readFileSync(path.resolve(__dirname, '../docs/settings.md'), 'utf8');
    const rows = new Map([...doc.matchAll(/^\| `([A-Z]+ \/settings[^`]*)` +\| (\w+) +\|/gm)].map((m) => [m[1], m[2]]));
    const table = Object.fromEntries(Object.entries(ROUTE_PERMISSIONS).filter(([k]) => / \/settings(\/|$)/.test(k)));
    expect(Object.fromEntries(rows)).toEqual(table);
  });

  it('refuses a form of the page to a person whose role was lowered since the page was loaded', async () => {
    const { agent, csrf } = await personAgent(t, 'viewer-person@example.test');
    const post = await createPost(t, f.key, {
      text: 'Lowered role',
      targets: [{ accountId: f.accountId }],
      scheduledAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    const deadJobId = post.jobs[0].id;
    await killJobs(t.databaseUrl, [deadJobId]);
    const person = (await t.http().get('/v1/people?limit=200').set(bearer(f.key)).expect(200)).body.data.find(
      (p: { email: string }) => p.email === 'viewer-person@example.test',
    ) as { id: string };
    await t.http().patch(`/v1/people/${person.id}`).set(bearer(f.key)).send({ role: 'editor' }).expect(200);
    const form = await agent.get(`/settings/failed-posts/${deadJobId}`);
    expect(form.text).toContain('Save and requeue');
    await t.http().patch(`/v1/people/${person.id}`).set(bearer(f.key)).send({ role: 'viewer' }).expect(200);
    const res = await agent
      .post(`/settings/failed-posts/${deadJobId}/discard`)
      .type('form')
      .send({ _csrf: csrfOf(form.text) || csrf });
    expect(res.status).toBe(403);
    expect(res.text).toContain('Nothing was changed');
    expect((await t.http().get(`/v1/dlq/${deadJobId}`).set(bearer(f.key)).expect(200)).body.status).toBe('dead');
  });
});
