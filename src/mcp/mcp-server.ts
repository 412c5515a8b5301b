import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AuthContext } from '../access/auth-context';
import { ROUTE_PERMISSIONS } from '../access/route-permissions';
import { PERMISSIONS, whoMay, type Permission } from '../access/roles';
import type { McpTools, ToolOutcome, ToolSpec } from './mcp-tools';
import { advertised, TOOL_SHAPES } from './tool-schemas';

// The controller loads this file (and with it the SDK and zod) at the first request to /mcp.
export { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/** What a client shows the model about the server as a whole (the `instructions` of initialize). */
export const INSTRUCTIONS = [
  'Herald publishes posts to connected accounts (Bluesky, LinkedIn, Mastodon, blog webhooks) and retries deliveries until they succeed or fail for good.',
  'Start with list_accounts: a post goes to accounts by their id. create_post publishes now, at a time (scheduledAt), or keeps a draft; submit_for_approval sends a draft to the owners for approval; get_post follows its delivery.',
  'get_calendar shows a week of posts; list_failed_posts shows deliveries that failed for good, and edit_and_requeue_failed_post sends one again.',
  "Every tool acts as the API key this connection uses, with that key's role: a refusal's message says why (the same words as Herald's REST API).",
].join(' ');

/** The tools' advertised input schemas, built once (zod keeps each schema's JSON Schema in its registry). */
const schemas = new WeakMap<ToolSpec, ReturnType<typeof advertised>>();
function inputSchemaOf(tool: ToolSpec) {
  let schema = schemas.get(tool);
  if (!schema) schemas.set(tool, (schema = advertised(TOOL_SHAPES[tool.shape])));
  return schema;
}

/** The strictest permission among a tool's routes, for its description. */
function needs(tool: ToolSpec): Permission {
  // PERMISSIONS lists them from the least to the most it takes.
  const at = (p: Permission) => PERMISSIONS.indexOf(p);
  return tool.routes.map((r) => ROUTE_PERMISSIONS[r]).reduce<Permission>((a, b) => (at(b) > at(a) ? b : a), 'public');
}

/**
 * A tool's answer as MCP carries it. A value: its JSON as text (what a model reads) and as
 * structured content (what a program reads). A refusal: a tool error (`isError: true`), not a
 * JSON-RPC error, so the model sees it and can correct its call; its text is the REST error's
 * message word for word, its structured content the REST error body ({ statusCode, error, message }).
 */
export function toCallToolResult(outcome: ToolOutcome): CallToolResult {
  const note = outcome.note ? [{ type: 'text' as const, text: outcome.note }] : [];
  if (outcome.ok) return { content: [{ type: 'text', text: JSON.stringify(outcome.value) }, ...note], structuredContent: outcome.value };
  return { isError: true, content: [{ type: 'text', text: outcome.error.message }, ...note], structuredContent: { ...outcome.error } };
}

/**
 * A server for one HTTP request of one caller (stateless: nothing outlives the request). Every
 * tool is listed to every key, each saying who may use it; a call the key's role does not
 * allow is refused by the tool with the API's 403 message (McpTools.call).
 */
export function createMcpServer(tools: McpTools, auth: AuthContext): McpServer {
  const server = new McpServer({ name: 'herald', title: 'Herald', version: '1' }, { instructions: INSTRUCTIONS });
  for (const tool of tools.tools) {
    const permission = needs(tool);
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: `${tool.description} Who may: ${whoMay(permission)}.`,
        inputSchema: inputSchemaOf(tool),
        annotations: {
          title: tool.title,
          readOnlyHint: tool.readOnly,
          // Creating adds; editing a failed post's payload replaces what it said.
          destructiveHint: !tool.readOnly && tool.routes.some((r) => r.startsWith('PATCH ')),
          idempotentHint: tool.readOnly,
          // Reads stay inside Herald; a post goes out to the platforms.
          openWorldHint: !tool.readOnly,
        },
      },
      async (args) => toCallToolResult(await tools.call(tool, auth, args)),
    );
  }
  return server;
}
