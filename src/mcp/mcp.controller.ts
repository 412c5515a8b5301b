import { Controller, Delete, Get, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { IncomingMessage } from 'node:http';
import { Auth, type AuthContext } from '../access/auth-context';
import { McpTools } from './mcp-tools';

/**
 * The MCP server at /mcp: Streamable HTTP, stateless (docs/mcp.md).
 *
 * It is a route of the app like any other, so it sits behind what every API request passes:
 * the JSON body parser and its 1 MB limit, the request log, the global API-key guard (no key or
 * a wrong one: the API's 401, wrong keys counted with the page's logins) and the route table
 * ('POST /mcp': any role; each tool then holds the key to the route it stands for).
 *
 * Stateless (`sessionIdGenerator: undefined`): every POST gets a server and a transport of its
 * own, built for the caller the guard resolved, and nothing outlives the request, so any
 * process behind a load balancer can answer any request. Answers are plain JSON
 * (`enableJsonResponse`) rather than an event stream: no tool sends progress or notifications.
 *
 * The SDK and zod (mcp-server.ts) are loaded at the first request, not at startup: most
 * processes never get one (docs/benchmarks.md, "Peak RSS").
 *
 * Not in the OpenAPI document (@ApiExcludeController): /mcp speaks JSON-RPC, not REST, and the
 * contract tests check /v1 answers only (docs/api-contract.md).
 */
@ApiExcludeController()
@Controller('mcp')
export class McpController {
  constructor(private readonly tools: McpTools) {}

  @Post()
  async handle(@Auth() auth: AuthContext, @Req() req: Request, @Res() res: Response): Promise<void> {
    const { createMcpServer, StreamableHTTPServerTransport } = await import('./mcp-server');
    const server = createMcpServer(this.tools, auth);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    // The guard's `req.auth` (Herald's caller) is not the SDK's AuthInfo: the tools get the
    // caller from `auth` above, and the transport sees a plain request.
    const message: IncomingMessage = req;
    await transport.handleRequest(message, res, req.body);
  }

  /**
   * A stateless server has no stream to open (GET) and no session to end (DELETE): 405 with a
   * JSON-RPC error, as the SDK's stateless example answers. The SDK's client takes a 405 to its
   * GET as "no server-sent stream here" and carries on.
   */
  @Get()
  refuseStream(@Res() res: Response): void {
    methodNotAllowed(res);
  }

  @Delete()
  refuseSessionEnd(@Res() res: Response): void {
    methodNotAllowed(res);
  }
}

function methodNotAllowed(res: Response): void {
  res
    .status(405)
    .setHeader('Allow', 'POST')
    .json({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Method not allowed: this MCP server is stateless; send each JSON-RPC message with POST /mcp.' },
      id: null,
    });
}
