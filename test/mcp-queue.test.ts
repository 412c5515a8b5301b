import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bearer } from './support/config';
import { useEngine } from './support/engine';

/**
 * create_post's `queue: true` through the SDK's client: the MCP side of the posting queue (the
 * field advertised from CreatePostDto, passed to the same DTO and service). Lives apart from
 * test/mcp.test.ts until the mcp and posting-queue branches meet.
 */
describe('create_post with the posting queue, through MCP', () => {
  const engine = useEngine();
  it('advertises queue, takes the next free slot, and refuses queue with scheduledAt in the REST words', async () => {
    const { port } = (engine.t.app.getHttpServer() as Server).address() as AddressInfo;
    const client = new Client({ name: 'q', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: bearer(engine.key) } }),
    );
    const { tools } = await client.listTools();
    const schema = JSON.parse(JSON.stringify(tools.find((t) => t.name === 'create_post')!.inputSchema));
    expect(schema.properties.queue).toMatchObject({ type: 'boolean' });
    await engine.t
      .http()
      .put('/v1/settings/queue')
      .set(bearer(engine.key))
      .send({
        timezone: 'Europe/Berlin',
        slots: [
          { day: 'mon', time: '09:00' },
          { day: 'thu', time: '14:30' },
        ],
      })
      .expect(200);
    const account = await engine.account('http://127.0.0.1:9/hook');
    const call = async (args: Record<string, unknown>) => {
      const r = (await client.callTool({ name: 'create_post', arguments: args })) as CallToolResult;
      return {
        isError: r.isError === true,
        text: r.content[0].type === 'text' ? r.content[0].text : '',
        data: JSON.parse(JSON.stringify(r.structuredContent)),
      };
    };
    const first = await call({ text: 'Queued one', targets: [{ accountId: account.id }], queue: true });
    const second = await call({ text: 'Queued two', targets: [{ accountId: account.id }], queue: true });
    expect(first.isError).toBe(false);
    expect(first.data.queueSlot).toMatchObject({ timezone: 'Europe/Berlin' });
    expect(first.data.scheduledAt).toBe(first.data.queueSlot.at);
    expect(second.data.queueSlot.at).not.toBe(first.data.queueSlot.at);
    const body = { text: 'Both', targets: [{ accountId: account.id }], queue: true, scheduledAt: '2030-01-01T09:00:00Z' };
    const rest = await engine.t.http().post('/v1/posts').set(bearer(engine.key)).send(body);
    expect(rest.status).toBe(400);
    const both = await call(body);
    expect(both).toMatchObject({ isError: true, text: rest.body.message });
    const notBool = await call({ text: 'x', targets: [{ accountId: account.id }], queue: 'yes' });
    expect(notBool.text).toBe('queue must be true or false');
    await client.close();
  });
});
