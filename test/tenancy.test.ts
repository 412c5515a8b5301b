import { randomUUID } from 'node:crypto';
import { bootTestApp, TestApp } from './support/app';
import { makeImage } from './support/media';
import { loggedInAgent } from './support/settings-http';
import {
  appRoutes,
  createFixtures,
  genericRequest,
  Fixtures,
  isErrorBody,
  requestFor,
  Route,
  routeKey,
  ROUTE_SPECS,
  send,
  urlFor,
  withFingerprints,
} from './support/route-table';
import { bearer } from './support/config';

/**
 * Workspace isolation, route by route, from the app's own router: another workspace's id on a
 * path is a 404 worded exactly like an unknown id's, inside a body a 400 "unknown …", in a
 * list filter it matches nothing; and not one row changes anywhere while refusing. A route
 * added to the API is in this suite the moment it is in the router.
 */
describe('workspace isolation on every /v1 route', () => {
  let t: TestApp;
  let mine: Fixtures;
  let theirs: Fixtures;
  let routes: Route[];
  let images: { png: Buffer };

  beforeAll(async () => {
    t = await bootTestApp({ config: { allowPrivateUrls: true } });
    images = { png: await makeImage('png') };
    mine = await createFixtures(t, 'Mine');
    theirs = await createFixtures(t, 'Theirs');
    routes = appRoutes(t);
  });
  afterAll(() => t.close());

  const idsOf = (f: Fixtures) => [
    f.workspaceId,
    f.apiKeyId,
    f.accountId,
    f.mediaId,
    f.postId,
    f.jobId,
    f.deadJobId,
    f.deadPostId,
    f.ownerPersonId,
    f.personId,
    f.invitationId,
  ];
  const hasParams = (r: Route) => r.path.includes('/:');

  it('finds the routes in the router, and every one is described in ROUTE_SPECS', () => {
    expect(routes.length).toBeGreaterThanOrEqual(33);
    const undescribed = routes.map(routeKey).filter((k) => !(k in ROUTE_SPECS));
    // A new route: add a request that works for it in test/support/route-table.ts.
    expect(undescribed).toEqual([]);
  });

  it("answers 404 for another workspace's id on every path, worded like an unknown id, and changes nothing", async () => {
    await withFingerprints(t.databaseUrl, async (fingerprint) => {
      const problems: string[] = [];
      for (const route of routes.filter(hasParams)) {
        const foreign = requestFor(route, theirs, images);
        const before = await fingerprint();
        const res = await send(t, route, urlFor(route, foreign), foreign, bearer(mine.key));
        const after = await fingerprint();
        if (res.status !== 404 || !isErrorBody(res.body, 404))
          problems.push(`${routeKey(route)}: ${res.status} ${JSON.stringify(res.body)}`);
        if (JSON.stringify(before) !== JSON.stringify(after)) problems.push(`${routeKey(route)}: rows changed`);
        // The same request with ids that exist nowhere: the answers must not tell them apart.
        const unknownIds = Object.fromEntries(Object.keys(foreign.params ?? {}).map((k) => [k, randomUUID()]));
        const unknown = { ...foreign, params: unknownIds };
        const res2 = await send(t, route, urlFor(route, unknown), unknown, bearer(mine.key));
        const mask = (text: string, ids: string[]) => ids.reduce((s, id) => s.split(id).join('<id>'), text);
        const a = mask(String(res.body.message), Object.values(foreign.params ?? {}));
        const b = mask(String(res2.body.message), Object.values(unknownIds));
        if (res2.status !== res.status || a !== b)
          problems.push(`${routeKey(route)}: foreign "${a}" (${res.status}) vs unknown "${b}" (${res2.status})`);
      }
      expect(problems).toEqual([]);
    });
  });

  it('refuses another workspace\'s ids inside a body with 400 "unknown …", worded like unknown ids, and changes nothing', async () => {
    const theirIds = idsOf(theirs);
    const cases: { route: Route; foreign: ReturnType<typeof requestFor> }[] = [];
    for (const route of routes) {
      const spec = ROUTE_SPECS[routeKey(route)];
      if (spec?.foreignBody) cases.push({ route, foreign: spec.foreignBody(mine, theirs) });
      const whole = requestFor(route, theirs, images);
      if (!hasParams(route) && theirIds.some((id) => JSON.stringify(whole.body ?? null).includes(id)))
        cases.push({ route, foreign: whole });
    }
    expect(cases.map((c) => routeKey(c.route)).sort()).toEqual([
      'PATCH /v1/dlq/:jobId',
      'PATCH /v1/posts/:id',
      'POST /v1/dlq/requeue',
      'POST /v1/posts',
      'POST /v1/posts/:id/share-links',
      'POST /v1/posts/batch',
    ]);
    // A batch answers each item's 400 inside a 207 (docs/api.md "Bulk"): its one item's answer is compared.
    const answerOf = (
      route: Route,
      res: { status: number; body: { message?: unknown; results?: { status: number; error?: unknown }[] } },
    ) =>
      routeKey(route) === 'POST /v1/posts/batch' && res.status === 207 && res.body.results?.length === 1
        ? { status: res.body.results[0].status, body: (res.body.results[0].error ?? {}) as { message?: unknown } }
        : res;
    await withFingerprints(t.databaseUrl, async (fingerprint) => {
      const problems: string[] = [];
      for (const { route, foreign } of cases) {
        const before = await fingerprint();
        const res = answerOf(route, await send(t, route, urlFor(route, foreign), foreign, bearer(mine.key)));
        if (res.status !== 400 || !/unknown/.test(String(res.body.message)))
          problems.push(`${routeKey(route)}: ${res.status} ${JSON.stringify(res.body)}`);
        if (JSON.stringify(before) !== JSON.stringify(await fingerprint())) problems.push(`${routeKey(route)}: rows changed`);
        // Their ids replaced by ids that exist nowhere: the same answer.
        let text = JSON.stringify(foreign.body);
        const swaps = theirIds.map((id) => [id, randomUUID()] as const);
        for (const [id, fresh] of swaps) text = text.split(id).join(fresh);
        const unknown = { ...foreign, body: JSON.parse(text) as unknown };
        const res2 = answerOf(route, await send(t, route, urlFor(route, unknown), unknown, bearer(mine.key)));
        let masked = String(res2.body.message);
        for (const [id, fresh] of swaps) masked = masked.split(fresh).join(id);
        if (res2.status !== res.status || masked !== res.body.message)
          problems.push(`${routeKey(route)}: foreign "${String(res.body.message)}" vs unknown "${String(res2.body.message)}"`);
      }
      expect(problems).toEqual([]);
    });
  });

  it("never shows another workspace's rows in a list, a filter or any other answer without a path id", async () => {
    const theirIds = idsOf(theirs);
    const problems: string[] = [];
    for (const route of routes.filter((r) => r.method === 'get' && !hasParams(r))) {
      // Their request (their ids in the filters) with my key, then my own request.
      for (const spec of [requestFor(route, theirs, images), requestFor(route, mine, images)]) {
        const res = await send(t, route, urlFor(route, spec), spec, bearer(mine.key));
        if (res.status >= 500) problems.push(`${routeKey(route)}: ${res.status}`);
        const leaked = theirIds.filter((id) => res.text.includes(id));
        if (leaked.length > 0) problems.push(`${routeKey(route)} shows ${leaked.join(', ')}`);
      }
    }
    expect(problems).toEqual([]);
    // The lists do show one's own rows: the check above has something to find.
    const accounts = await t.http().get('/v1/accounts').set(bearer(mine.key)).expect(200);
    expect(accounts.text).toContain(mine.accountId);
    const dlq = await t.http().get(`/v1/dlq?accountId=${mine.accountId}`).set(bearer(mine.key)).expect(200);
    expect(dlq.text).toContain(mine.deadJobId);
  });

  it("refuses another workspace's id on every settings page (404) and form (as for an unknown id), and changes nothing", async () => {
    const { agent, csrf } = await loggedInAgent(t, mine.key);
    const seen = new Set<string>();
    const pages = appRoutes(t, '/settings/').filter((r) => {
      const fresh = !seen.has(routeKey(r));
      seen.add(routeKey(r));
      return fresh && hasParams(r) && !r.path.includes('/assets/') && !r.path.includes(':provider');
    });
    expect(pages.length).toBeGreaterThanOrEqual(15);
    // The page's own session row is touched by every request it makes (and holds the next flash message).
    const withoutSessions = (print: Record<string, string>) =>
      Object.fromEntries(Object.entries(print).filter(([table]) => !/session/.test(table)));
    const sendAs = (route: Route, url: string) =>
      route.method === 'get' ? agent.get(url) : agent.post(url).type('form').send({ _csrf: csrf });
    await withFingerprints(t.databaseUrl, async (fingerprint) => {
      const problems: string[] = [];
      for (const route of pages) {
        const foreign = genericRequest(route, theirs);
        const before = withoutSessions(await fingerprint());
        const res = await sendAs(route, urlFor(route, foreign));
        if (JSON.stringify(withoutSessions(await fingerprint())) !== JSON.stringify(before))
          problems.push(`${routeKey(route)}: rows changed`);
        if (/Theirs/.test(res.text)) problems.push(`${routeKey(route)} shows the other workspace's content`);
        if (route.method === 'get' && res.status !== 404) problems.push(`${routeKey(route)}: ${res.status}`);
        // A form answers a foreign id exactly as an id that exists nowhere (a page: 404 either way).
        const unknownIds = Object.fromEntries(Object.keys(foreign.params ?? {}).map((k) => [k, randomUUID()]));
        const res2 = await sendAs(route, urlFor(route, { params: unknownIds }));
        const mask = (text: string | undefined, ids: string[]) => ids.reduce((x, id) => x.split(id).join('<id>'), text ?? '');
        const a = `${res.status} ${mask(res.headers.location, Object.values(foreign.params ?? {}))}`;
        const b = `${res2.status} ${mask(res2.headers.location, Object.values(unknownIds))}`;
        if (a !== b) problems.push(`${routeKey(route)}: foreign "${a}" vs unknown "${b}"`);
        if (res.status >= 500) problems.push(`${routeKey(route)}: ${res.status}`);
      }
      expect(problems).toEqual([]);
    });
    // The same pages open for the workspace's own ids (the check above can fail).
    expect((await agent.get(`/settings/accounts/${mine.accountId}/reconnect`)).status).toBe(200);
    expect((await agent.get(`/settings/failed-posts/${mine.deadJobId}`)).status).toBe(200);
  });

  it('keeps the bootstrap-only routes to the bootstrap key (403 for a workspace key)', async () => {
    const adminOnly = routes.filter((r) => ROUTE_SPECS[routeKey(r)]?.adminOnly);
    expect(adminOnly.map(routeKey)).toEqual(['POST /v1/workspaces']);
    await withFingerprints(t.databaseUrl, async (fingerprint) => {
      for (const route of adminOnly) {
        const spec = requestFor(route, mine, images);
        const before = await fingerprint();
        const res = await send(t, route, urlFor(route, spec), spec, bearer(mine.key));
        expect(res.status).toBe(403);
        expect(await fingerprint()).toEqual(before);
      }
    });
  });

  it("leaves the other workspace's things working for it", async () => {
    for (const path of [
      `/v1/accounts/${theirs.accountId}`,
      `/v1/posts/${theirs.postId}`,
      `/v1/jobs/${theirs.jobId}`,
      `/v1/dlq/${theirs.deadJobId}`,
      `/v1/media/${theirs.mediaId}`,
    ]) {
      await t.http().get(path).set(bearer(theirs.key)).expect(200);
    }
    const keys = await t.http().get('/v1/api-keys').set(bearer(theirs.key)).expect(200);
    expect(keys.text).toContain(theirs.apiKeyId);
  });
});
