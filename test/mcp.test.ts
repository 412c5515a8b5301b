import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestApp } from './support/app';
import { bearer } from './support/config';
import { createWebhookAccount, useEngine } from './support/engine';
import { verifySignature } from './support/receiver';

/**
 * The MCP server at /mcp, through the SDK's own client (Client + StreamableHTTPClientTransport)
 * over real HTTP to the real app, whose worker delivers to a loopback receiver: nothing of the
 * MCP side is faked. Each refusal is compared with the REST API's answer to the same request.
 */

const TOOLS = [
  'create_post',
  'submit_for_approval',
  'edit_and_requeue_failed_post',
  'get_calendar',
  'get_post',
  'list_accounts',
  'list_failed_posts',
  'list_posts',
].sort();

function mcpUrl(t: TestApp): URL {
  const { port } = (t.app.getHttpServer() as Server).address() as AddressInfo;
  return new URL(`http://127.0.0.1:${port}/mcp`);
}

/** An MCP client connected (initialize done) with `key` in Authorization, as a desktop client is configured. */
async function connect(t: TestApp, key: string, clients: Client[]): Promise<Client> {
  const client = new Client({ name: 'herald-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(mcpUrl(t), { requestInit: { headers: bearer(key) } });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** A tool call's answer: its structured content, or the refusal's text and status. */
async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const texts = result.content.map((c) => (c.type === 'text' ? c.text : ''));
  // Untyped, as a supertest body is: the tests read it as the API's JSON.
  const data = JSON.parse(JSON.stringify(result.structuredContent ?? null));
  return { isError: result.isError === true, text: texts[0], notes: texts.slice(1), data };
}

describe('the MCP server at /mcp', () => {
  const engine = useEngine();
  const clients: Client[] = [];
  let editorKey: string;
  let viewerKey: string;

  const roleKey = async (role: 'editor' | 'viewer') => {
    const res = await engine.t
      .http()
      .post('/v1/api-keys')
      .set(bearer(engine.key))
      .send({ name: `MCP ${role}`, role });
    expect(res.status).toBe(201);
    return res.body.key as string;
  };

  beforeAll(async () => {
    editorKey = await roleKey('editor');
    viewerKey = await roleKey('viewer');
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });

  it('the MCP walk: from initialize to a published post, with an editor key', async () => {
    const receiver = await engine.receiver(() => ({ status: 200, body: { url: 'https://blog.example/posts/mcp-walk' } }));
    const account = await engine.account(receiver.urlFor('/hook'));

    const client = await connect(engine.t, editorKey, clients);
    expect(client.getServerVersion()).toMatchObject({ name: 'herald' });
    expect(client.getInstructions()).toContain('list_accounts');
    expect(client.getServerCapabilities()?.tools).toBeDefined();

    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);

    const accounts = await call(client, 'list_accounts', {});
    expect(accounts.isError).toBe(false);
    expect(accounts.data.data.map((a: { id: string }) => a.id)).toContain(account.id);

    const created = await call(client, 'create_post', { text: 'Hello from an MCP client', targets: [{ accountId: account.id }] });
    expect(created.isError).toBe(false);
    expect(created.data).toMatchObject({ text: 'Hello from an MCP client', jobs: [{ accountId: account.id }] });
    expect(JSON.parse(created.text)).toEqual(created.data);

    const [delivery] = await receiver.waitFor(1);
    const payload = verifySignature(account.secret, delivery) as { data: { postId: string; text: string } };
    expect(payload.data).toMatchObject({ postId: created.data.id, text: 'Hello from an MCP client' });

    const published = await engine.waitForJob(created.data.jobs[0].id, (j) => j.status === 'succeeded');
    expect(published.remoteUrl).toBe('https://blog.example/posts/mcp-walk');
    const post = await call(client, 'get_post', { id: created.data.id });
    expect(post.data).toMatchObject({ id: created.data.id, status: 'published', jobs: [{ status: 'succeeded' }] });
    // The key acted: the audit trail names it, as for the same call through the API.
    const audit = await engine.t.http().get('/v1/audit').set(bearer(engine.key)).expect(200);
    expect(JSON.stringify(audit.body.data)).toContain('MCP editor');
  });

  it("advertises each tool's input as its REST contract: fields, limits, required ones, nothing else", async () => {
    const client = await connect(engine.t, viewerKey, clients);
    const { tools } = await client.listTools();
    const create = tools.find((t) => t.name === 'create_post')!;
    const schema = JSON.parse(JSON.stringify(create.inputSchema));
    expect(schema.required).toEqual(['text', 'targets']);
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.text).toMatchObject({ type: 'string', minLength: 1, maxLength: 10_000 });
    expect(schema.properties.targets).toMatchObject({ type: 'array', minItems: 1, maxItems: 20 });
    expect(schema.properties.targets.items.required).toEqual(['accountId']);
    expect(schema.properties.status.enum).toEqual(['scheduled', 'draft']);
    expect(create.description).toContain('Who may: an editor or an owner.');
    expect(create.annotations).toMatchObject({ readOnlyHint: false });
    const listPosts = tools.find((t) => t.name === 'list_posts')!;
    expect(listPosts.annotations).toMatchObject({ readOnlyHint: true });
    expect(Object.keys((listPosts.inputSchema as { properties: object }).properties).sort()).toEqual([
      'cursor',
      'from',
      'limit',
      'status',
      'to',
    ]);
  });

  it("refuses a viewer's key create_post with the REST 403's words, and creates nothing; the viewer still reads", async () => {
    const account = await engine.account('http://127.0.0.1:9/hook');
    const body = { text: 'A viewer tries', targets: [{ accountId: account.id }] };
    const rest = await engine.t.http().post('/v1/posts').set(bearer(viewerKey)).send(body);
    expect(rest.status).toBe(403);

    const client = await connect(engine.t, viewerKey, clients);
    const refused = await call(client, 'create_post', body);
    expect(refused).toMatchObject({
      isError: true,
      text: rest.body.message,
      data: { statusCode: 403, error: 'Forbidden', message: rest.body.message },
    });
    expect(refused.text).toBe("Only an editor or an owner may do this; this API key's role is viewer. Nothing was changed.");
    const requeue = await call(client, 'edit_and_requeue_failed_post', { jobId: '00000000-0000-4000-8000-000000000000', text: 'x' });
    expect(requeue).toMatchObject({ isError: true, text: rest.body.message });

    const rows = await engine.sql<{ n: string }>(`SELECT count(*) AS n FROM posts WHERE text = 'A viewer tries'`);
    expect(Number(rows[0].n)).toBe(0);
    const posts = await call(client, 'list_posts', { limit: 5 });
    expect(posts.isError).toBe(false);
    expect(Array.isArray(posts.data.data)).toBe(true);
  });

  it('refuses bad input with the REST 400 (and 404) words, changing nothing', async () => {
    const account = await engine.account('http://127.0.0.1:9/hook');
    const client = await connect(engine.t, editorKey, clients);
    const cases: { tool: string; args: Record<string, unknown>; rest: () => Promise<{ status: number; body: { message: string } }> }[] = [
      {
        tool: 'create_post',
        args: { text: 'x'.repeat(10_001), targets: [{ accountId: account.id }] },
        rest: () =>
          engine.t
            .http()
            .post('/v1/posts')
            .set(bearer(editorKey))
            .send({ text: 'x'.repeat(10_001), targets: [{ accountId: account.id }] }),
      },
      {
        tool: 'create_post',
        args: { text: 'No targets', targets: [], colour: 'red' },
        rest: () => engine.t.http().post('/v1/posts').set(bearer(editorKey)).send({ text: 'No targets', targets: [], colour: 'red' }),
      },
      {
        tool: 'create_post',
        args: { text: 'When?', targets: [{ accountId: account.id }], scheduledAt: 'tomorrow at nine' },
        rest: () =>
          engine.t
            .http()
            .post('/v1/posts')
            .set(bearer(editorKey))
            .send({ text: 'When?', targets: [{ accountId: account.id }], scheduledAt: 'tomorrow at nine' }),
      },
      {
        // Beyond the DTO: the service's own check (an account that is not in the workspace).
        tool: 'create_post',
        args: { text: 'Nobody', targets: [{ accountId: '00000000-0000-4000-8000-000000000000' }] },
        rest: () =>
          engine.t
            .http()
            .post('/v1/posts')
            .set(bearer(editorKey))
            .send({ text: 'Nobody', targets: [{ accountId: '00000000-0000-4000-8000-000000000000' }] }),
      },
      {
        tool: 'list_posts',
        args: { status: 'lost', limit: 500 },
        rest: () => engine.t.http().get('/v1/posts?status=lost&limit=500').set(bearer(editorKey)),
      },
      {
        tool: 'get_post',
        args: { id: '00000000-0000-4000-8000-000000000000' },
        rest: () => engine.t.http().get('/v1/posts/00000000-0000-4000-8000-000000000000').set(bearer(editorKey)),
      },
      {
        tool: 'get_post',
        args: { id: 'not-an-id' },
        rest: () => engine.t.http().get('/v1/posts/not-an-id').set(bearer(editorKey)),
      },
      {
        tool: 'edit_and_requeue_failed_post',
        args: { jobId: '00000000-0000-4000-8000-000000000000', link: 'ftp://example.com' },
        rest: () =>
          engine.t.http().patch('/v1/dlq/00000000-0000-4000-8000-000000000000').set(bearer(editorKey)).send({ link: 'ftp://example.com' }),
      },
    ];
    const before = await engine.sql<{ n: string }>('SELECT count(*) AS n FROM posts');
    for (const c of cases) {
      const rest = await c.rest();
      expect([400, 404]).toContain(rest.status);
      const answer = await call(client, c.tool, c.args);
      expect({ tool: c.tool, args: c.args, isError: answer.isError, text: answer.text, status: answer.data.statusCode }).toEqual({
        tool: c.tool,
        args: c.args,
        isError: true,
        text: rest.body.message,
        status: rest.status,
      });
    }
    // The words themselves name the field, as the API's do.
    expect((await call(client, 'create_post', cases[1].args)).text).toBe(
      'colour is not allowed (unknown field); targets must contain at least 1 elements',
    );
    expect((await call(client, 'get_post', { id: 'not-an-id' })).text).toBe('post "not-an-id" was not found');
    const after = await engine.sql<{ n: string }>('SELECT count(*) AS n FROM posts');
    expect(after[0].n).toBe(before[0].n);
  });

  it('makes a draft, a scheduled post and, with an idempotency key, one post for two calls', async () => {
    const account = await engine.account('http://127.0.0.1:9/hook');
    const client = await connect(engine.t, editorKey, clients);
    const draft = await call(client, 'create_post', { text: 'A draft', targets: [{ accountId: account.id }], status: 'draft' });
    expect(draft.data).toMatchObject({ status: 'draft', jobs: [] });
    const at = new Date(Date.now() + 7 * 86_400_000).toISOString();
    const scheduled = await call(client, 'create_post', { text: 'Next week', targets: [{ accountId: account.id }], scheduledAt: at });
    expect(scheduled.data).toMatchObject({ status: 'scheduled', scheduledAt: at });

    const args = { text: 'Once only', targets: [{ accountId: account.id }], idempotencyKey: 'mcp-once' };
    const first = await call(client, 'create_post', args);
    const again = await call(client, 'create_post', args);
    expect(again.data.id).toBe(first.data.id);
    expect(again.notes.join(' ')).toContain('used before with the same input');
    const other = await call(client, 'create_post', { ...args, text: 'Twice?' });
    expect(other).toMatchObject({ isError: true, data: { statusCode: 422 } });
    expect(other.text).toContain('Idempotency-Key was already used with a different request body');
  });

  it('submits a draft for approval, refused (409) where none is needed; an owner approves it and the receiver gets it', async () => {
    // A workspace of its own: its approval mode is the test's.
    const ws = await engine.t.http().post('/v1/workspaces').set(bearer(engine.key)).send({ name: 'Approvals through MCP' });
    expect(ws.status).toBe(201);
    const owner = ws.body.apiKey.key as string;
    const made = await engine.t.http().post('/v1/api-keys').set(bearer(owner)).send({ name: 'Assistant', role: 'editor' });
    const editor = made.body.key as string;
    const receiver = await engine.receiver(() => 200);
    const account = await createWebhookAccount(engine.t, owner, receiver.urlFor('/hook'));
    const client = await connect(engine.t, editor, clients);
    const draft = await call(client, 'create_post', { text: 'Needs a yes', targets: [{ accountId: account.id }], status: 'draft' });
    expect(draft.data).toMatchObject({ status: 'draft' });

    // Mode off: nothing to submit to, the REST 409's words, and the draft stays a draft.
    const rest = await engine.t.http().post(`/v1/posts/${draft.data.id}/submit`).set(bearer(editor));
    expect(rest.status).toBe(409);
    const off = await call(client, 'submit_for_approval', { id: draft.data.id });
    expect(off).toMatchObject({ isError: true, text: rest.body.message, data: { statusCode: 409 } });

    await engine.t.http().put('/v1/settings/approvals').set(bearer(owner)).send({ mode: 'editors', clientApproval: false }).expect(200);
    const submitted = await call(client, 'submit_for_approval', { id: draft.data.id });
    expect(submitted.isError).toBe(false);
    expect(submitted.data).toMatchObject({ id: draft.data.id, status: 'pending_approval', jobs: [] });
    // A post made now waits too, as through the API.
    const waiting = await call(client, 'create_post', { text: 'Also waits', targets: [{ accountId: account.id }] });
    expect(waiting.data).toMatchObject({ status: 'pending_approval', jobs: [] });
    // An editor's key may submit but not approve: approving is an owner's (its own REST route, no tool).
    const viewer = await engine.t.http().post('/v1/api-keys').set(bearer(owner)).send({ name: 'Reader', role: 'viewer' });
    const viewerClient = await connect(engine.t, viewer.body.key as string, clients);
    expect(await call(viewerClient, 'submit_for_approval', { id: waiting.data.id })).toMatchObject({
      isError: true,
      data: { statusCode: 403 },
    });

    await engine.t.http().post(`/v1/posts/${draft.data.id}/approve`).set(bearer(owner)).expect(200);
    const [delivery] = await receiver.waitFor(1);
    expect((verifySignature(account.secret, delivery) as { data: { text: string } }).data.text).toBe('Needs a yes');
    const published = await call(client, 'get_post', { id: draft.data.id });
    expect(published.data.jobs).toHaveLength(1);
  });

  it('lists a failed post, edits it and requeues it, and the receiver gets the new text', async () => {
    // The receiver refuses the first delivery for good (a 400 is permanent), then takes the requeued one.
    const receiver = await engine.receiver((_req, i) => (i === 0 ? { status: 400, body: { error: 'no' } } : 200));
    const account = await engine.account(receiver.urlFor('/hook'));
    const client = await connect(engine.t, editorKey, clients);
    const created = await call(client, 'create_post', { text: 'Frist draft', targets: [{ accountId: account.id }] });
    const jobId = created.data.jobs[0].id as string;
    await engine.waitForJob(jobId, (j) => j.status === 'dead');

    const failed = await call(client, 'list_failed_posts', { accountId: account.id });
    expect(failed.data.data).toEqual([expect.objectContaining({ id: jobId, deadReason: 'permanent', errorClass: 'permanent' })]);

    const fixed = await call(client, 'edit_and_requeue_failed_post', { jobId, text: 'First draft' });
    expect(fixed.isError).toBe(false);
    expect(fixed.data).toMatchObject({ id: jobId, payload: { text: 'First draft' } });
    await engine.waitForJob(jobId, (j) => j.status === 'succeeded');
    const [, second] = await receiver.waitFor(2);
    expect((verifySignature(account.secret, second) as { data: { text: string } }).data.text).toBe('First draft');

    // Not dead any more: the REST 409, word for word.
    const rest = await engine.t.http().post(`/v1/dlq/${jobId}/requeue`).set(bearer(editorKey)).send({});
    expect(rest.status).toBe(409);
    const again = await call(client, 'edit_and_requeue_failed_post', { jobId });
    expect(again).toMatchObject({ isError: true, text: rest.body.message, data: { statusCode: 409 } });
  });

  it("shows a week as the page's calendar does: days in the time zone, posts at their local time, drafts beside", async () => {
    const account = await engine.account('http://127.0.0.1:9/hook', { name: 'Calendar blog' });
    const client = await connect(engine.t, viewerKey, clients);
    // Tuesday 2030-01-08 at 00:30 in Berlin is Monday 23:30 UTC: the zone decides the day.
    const post = await engine.post({
      text: 'Late on Monday in UTC',
      targets: [{ accountId: account.id }],
      scheduledAt: '2030-01-07T23:30:00Z',
    });
    const draft = await engine.post({ text: 'No day yet', title: 'Idea', targets: [{ accountId: account.id }], status: 'draft' });
    const week = await call(client, 'get_calendar', { date: '2030-01-09', timezone: 'Europe/Berlin' });
    expect(week.isError).toBe(false);
    expect(week.data).toMatchObject({ timezone: 'Europe/Berlin', title: 'Week of 7 Jan 2030', previous: '2029-12-31', next: '2030-01-14' });
    expect(week.data.days.map((d: { date: string }) => d.date)).toEqual([
      '2030-01-07',
      '2030-01-08',
      '2030-01-09',
      '2030-01-10',
      '2030-01-11',
      '2030-01-12',
      '2030-01-13',
    ]);
    const tuesday = week.data.days[1];
    expect(tuesday.posts).toEqual([
      expect.objectContaining({
        id: post.id,
        time: '00:30',
        status: 'scheduled',
        editable: true,
        targets: [expect.objectContaining({ accountId: account.id, account: 'Calendar blog', status: 'scheduled' })],
      }),
    ]);
    expect(week.data.drafts).toContainEqual({ id: draft.id, title: 'Idea', excerpt: 'No day yet', accounts: ['Calendar blog'] });
    const utc = await call(client, 'get_calendar', { date: '2030-01-09' });
    expect(utc.data.days[0].posts.map((p: { id: string }) => p.id)).toEqual([post.id]);

    const bad = await call(client, 'get_calendar', { date: '2030-02-30', timezone: 'Mars/Olympus' });
    expect(bad).toMatchObject({ isError: true, data: { statusCode: 400 } });
    expect(bad.text).toBe(
      'date must be a day as YYYY-MM-DD, e.g. 2026-12-07; timezone must be an IANA time zone such as Europe/Berlin or UTC',
    );
  });

  it('answers no key and a wrong key as the API does (401), and GET or DELETE with 405', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
    };
    const accept = { Accept: 'application/json, text/event-stream' };
    const none = await engine.t.http().post('/mcp').set(accept).send(init);
    const restNone = await engine.t.http().get('/v1/posts');
    expect(none.status).toBe(401);
    expect(none.body).toEqual(restNone.body);
    expect(none.headers['www-authenticate']).toBe('Bearer realm="herald"');
    const wrong = await engine.t.http().post('/mcp').set(accept).set(bearer('hk_wrong')).send(init);
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual((await engine.t.http().get('/v1/posts').set(bearer('hk_wrong'))).body);

    // The SDK's client fails to connect with the 401 in its error.
    const client = new Client({ name: 'no-key', version: '1' });
    await expect(client.connect(new StreamableHTTPClientTransport(mcpUrl(engine.t)))).rejects.toThrow(/401/);

    const ok = await engine.t.http().post('/mcp').set(accept).set(bearer(viewerKey)).send(init);
    expect(ok.status).toBe(200);
    expect(ok.headers['content-type']).toMatch(/^application\/json/);
    expect(ok.body.result.serverInfo.name).toBe('herald');
    expect(ok.headers['mcp-session-id']).toBeUndefined();

    for (const method of ['get', 'delete'] as const) {
      const agent = engine.t.http();
      const res = await (method === 'get' ? agent.get('/mcp') : agent.delete('/mcp')).set(accept).set(bearer(viewerKey));
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('POST');
      expect(res.body.error.code).toBe(-32000);
    }
    // The API's body limit applies: 413, before any tool runs.
    const big = await engine.t
      .http()
      .post('/mcp')
      .set(accept)
      .set(bearer(viewerKey))
      .send({ ...init, params: { ...init.params, padding: 'x'.repeat(1_100_000) } });
    expect(big.status).toBe(413);
  });
});
