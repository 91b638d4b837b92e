import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  isJSONRPCRequest,
  ListToolsRequestSchema,
  PingRequestSchema,
  type JSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type * as z from 'zod/v4';
import type { HeraldTool } from './herald-tools.js';

export const MCP_SERVER_INFO = { name: 'herald-docs', version: '1.0.0' };

const INSTRUCTIONS =
  'Documentation of Herald, a notification gateway for Solana wallets. Call get_herald_context for everything at once, search_herald_docs to find a topic, get_doc_page to read a page, get_integration_example for runnable code.';

/** The params of every method this server answers; other methods are -32601 (the SDK's answer). */
const PARAMS_SCHEMAS = new Map<string, z.ZodType>([
  ['initialize', InitializeRequestSchema],
  ['ping', PingRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['tools/call', CallToolRequestSchema],
]);

/** The methods this server answers (beyond notifications): their params are checked here. */
export const SERVED_METHODS: ReadonlySet<string> = new Set(PARAMS_SCHEMAS.keys());

function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
}

/**
 * What is wrong with a request's params: a protocol error (-32602: malformed params, an unknown
 * tool, a cursor this server never issued), or tool arguments that do not match the tool's schema,
 * which MCP 2025-11-25 answers as a tool result with `isError` so that the model reads the reason
 * and can correct its call. Undefined when they are fine.
 */
export type ParamsProblem = { protocol: string } | { toolArguments: string };

export function invalidParams(request: JSONRPCRequest, tools: Map<string, HeraldTool>): ParamsProblem | undefined {
  const schema = PARAMS_SCHEMAS.get(request.method);
  if (!schema) return undefined;
  const envelope = schema.safeParse(request);
  if (!envelope.success) return { protocol: `Invalid params for ${request.method}: ${describeIssues(envelope.error)}` };
  if (request.method === 'tools/list') {
    // Every list fits one page, so this server never issues a cursor.
    const cursor = (request.params as { cursor?: unknown } | undefined)?.cursor;
    return cursor === undefined ? undefined : { protocol: `Invalid params for tools/list: unknown cursor ${JSON.stringify(cursor)} (this server lists every tool in one page)` };
  }
  if (request.method !== 'tools/call') return undefined;
  const { name, arguments: args } = request.params as { name: string; arguments?: Record<string, unknown> };
  const tool = tools.get(name);
  if (!tool) return { protocol: `Unknown tool "${name}". Valid tools: ${[...tools.keys()].join(', ')}` };
  const parsed = tool.input.safeParse(args ?? {});
  if (!parsed.success) return { toolArguments: `Invalid arguments for tool ${name}: ${describeIssues(parsed.error)}` };
  return undefined;
}

/**
 * Answers invalid params before the SDK sees them: a malformed request with -32602 (the SDK would
 * answer -32603, internal error), bad tool arguments with an `isError` result naming every bad
 * argument. A tools/call asking to run as a task (`params.task`) is served as a plain call: this
 * server declares no task support, and MCP has such a server ignore the augmentation.
 */
function guardParams(transport: Transport, tools: Map<string, HeraldTool>): void {
  const deliver = transport.onmessage!;
  transport.onmessage = (message, extra) => {
    if (!isJSONRPCRequest(message)) return deliver(message, extra);
    const problem = invalidParams(message, tools);
    if (problem === undefined) {
      if (message.method === 'tools/call' && message.params && 'task' in message.params) {
        const { task: _ignored, ...params } = message.params;
        return deliver({ ...message, params }, extra);
      }
      return deliver(message, extra);
    }
    const { id } = message;
    if ('protocol' in problem) void transport.send({ jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidParams, message: problem.protocol } });
    else void transport.send({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: problem.toolArguments }], isError: true } });
  };
}

/** A fresh server per request (stateless mode), connected to `transport`. */
export async function connectMcpServer(tools: HeraldTool[], transport: Transport): Promise<McpServer> {
  const server = new McpServer(MCP_SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  for (const tool of tools) {
    server.registerTool(
      tool.name,
      // Every tool reads the documentation this server holds: nothing changes, nothing outside is reached.
      { title: tool.title, description: tool.description, inputSchema: tool.input, annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false } },
      async (args) => tool.run(args),
    );
  }
  // registerTool advertises listChanged: true; this server is built per request and its tools never change.
  server.server.registerCapabilities({ tools: { listChanged: false } });
  await server.connect(transport);
  guardParams(transport, new Map(tools.map((tool) => [tool.name, tool])));
  return server;
}
