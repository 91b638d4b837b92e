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

function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
}

/** Why a request's params are invalid, or undefined when they are fine. */
export function invalidParams(request: JSONRPCRequest, tools: Map<string, HeraldTool>): string | undefined {
  const schema = PARAMS_SCHEMAS.get(request.method);
  if (!schema) return undefined;
  const envelope = schema.safeParse(request);
  if (!envelope.success) return `Invalid params for ${request.method}: ${describeIssues(envelope.error)}`;
  if (request.method !== 'tools/call') return undefined;
  const { name, arguments: args } = request.params as { name: string; arguments?: Record<string, unknown> };
  const tool = tools.get(name);
  if (!tool) return `Unknown tool "${name}". Valid tools: ${[...tools.keys()].join(', ')}`;
  const parsed = tool.input.safeParse(args ?? {});
  if (!parsed.success) return `Invalid arguments for tool ${name}: ${describeIssues(parsed.error)}`;
  return undefined;
}

/**
 * Answers invalid params with -32602 before the SDK sees them. The SDK would answer a malformed
 * request with -32603 (internal error) and bad tool arguments with an `isError` tool result; the
 * JSON-RPC contract of this endpoint is -32602 for both.
 */
function guardParams(transport: Transport, tools: Map<string, HeraldTool>): void {
  const deliver = transport.onmessage!;
  transport.onmessage = (message, extra) => {
    const problem = isJSONRPCRequest(message) ? invalidParams(message, tools) : undefined;
    if (problem === undefined) return deliver(message, extra);
    const id = (message as JSONRPCRequest).id;
    void transport.send({ jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidParams, message: problem } });
  };
}

/** A fresh server per request (stateless mode), connected to `transport`. */
export async function connectMcpServer(tools: HeraldTool[], transport: Transport): Promise<McpServer> {
  const server = new McpServer(MCP_SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  for (const tool of tools) {
    server.registerTool(tool.name, { title: tool.title, description: tool.description, inputSchema: tool.input }, async (args) => tool.run(args));
  }
  // registerTool advertises listChanged: true; this server is built per request and its tools never change.
  server.server.registerCapabilities({ tools: { listChanged: false } });
  await server.connect(transport);
  guardParams(transport, new Map(tools.map((tool) => [tool.name, tool])));
  return server;
}
