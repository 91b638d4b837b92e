import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Deps } from '../deps.js';
import { ApiError } from '../http/errors.js';
import { requestFinished } from '../http/guard.js';
import { acceptsJson, completeAcceptHeader } from './complete-accept-header.js';
import { connectMcpServer } from './create-mcp-server.js';
import { buildHeraldTools, type HeraldTool } from './herald-tools.js';
import { loadDocsLibrary } from './load-docs-library.js';
import { INTERNAL_ERROR, jsonRpcError, readJsonRpcBody, SERVER_ERROR } from './read-jsonrpc-body.js';

const METHOD_NOT_ALLOWED = jsonRpcError(SERVER_ERROR, 'Method not allowed: this endpoint is stateless, send JSON-RPC with POST');
// Ours, not the transport's: it would ask for text/event-stream too, which this endpoint never sends.
const NOT_ACCEPTABLE = jsonRpcError(SERVER_ERROR, 'Not Acceptable: the client must accept application/json');

/** Headers Fastify holds for the reply (rate limit) and its onSend hook would add: the reply is hijacked. */
function copyHeaders(request: FastifyRequest, reply: FastifyReply): void {
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) reply.raw.setHeader(name, value as string | number | string[]);
  }
  reply.raw.setHeader('X-Request-Id', request.id);
}

async function answerMcp(tools: HeraldTool[], log: Logger, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const body = readJsonRpcBody(request.body as string | undefined);
  if ('error' in body) return reply.code(400).send(body.error);
  if (!acceptsJson(request.headers.accept)) return reply.code(406).send(NOT_ACCEPTABLE);
  completeAcceptHeader(request.raw);
  reply.hijack();
  copyHeaders(request, reply);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  try {
    const server = await connectMcpServer(tools, transport);
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await transport.handleRequest(request.raw, reply.raw, body.message);
  } catch (error) {
    log.error({ err: error, reqId: request.id }, 'MCP request failed');
    if (!reply.raw.headersSent) {
      reply.raw.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify(jsonRpcError(INTERNAL_ERROR, `Internal error (request ${request.id})`)));
    }
  } finally {
    // A hijacked reply never reaches the onSend hook that would count it answered.
    requestFinished(request);
  }
}

/**
 * Every failure before the JSON-RPC layer (rate limit, body too large, wrong content type) still
 * answers a JSON-RPC error: MCP clients parse nothing else. The HTTP status and headers are kept.
 */
function installJsonRpcErrorHandler(scope: FastifyInstance, log: Logger): void {
  scope.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) reply.headers(error.headers);
    const status = error.statusCode && error.statusCode >= 400 ? error.statusCode : 500;
    if (status >= 500) {
      log.error({ err: error, reqId: request.id }, 'MCP request failed');
      return reply.code(status).send(jsonRpcError(INTERNAL_ERROR, `Internal error (request ${request.id})`));
    }
    const message = (error as FastifyError).code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ? 'Unsupported Media Type: send Content-Type: application/json' : error.message;
    return reply.code(status).send(jsonRpcError(SERVER_ERROR, message));
  });
}

/**
 * `POST /mcp`: the documentation served over MCP (Streamable HTTP, stateless, JSON responses), no
 * authentication. Docs and examples are read once, at start-up.
 */
export async function mcpRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  const library = await loadDocsLibrary(deps.config.docsDir, deps.config.examplesDir);
  const tools = buildHeraldTools(library, () => app.swagger() as { paths?: Record<string, Record<string, any>> });

  await app.register(async (scope) => {
    // The body reaches the handler as text, so a malformed one is answered -32700 by this endpoint.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, body));
    installJsonRpcErrorHandler(scope, deps.log);

    scope.post(
      '/mcp',
      {
        config: { access: 'public' },
        schema: {
          tags: ['mcp'],
          summary: 'MCP documentation endpoint (JSON-RPC 2.0 over Streamable HTTP)',
          description:
            'Stateless MCP server answering JSON. Methods: initialize, tools/list, tools/call. Tools: get_herald_context, search_herald_docs {query, maxResults}, get_integration_example {pattern}, get_doc_page {slug}. No authentication; Content-Type: application/json is enough (no Accept header needed).',
        },
      },
      (request, reply) => answerMcp(tools, deps.log, request, reply),
    );
    for (const method of ['GET', 'DELETE'] as const) {
      scope.route({
        method,
        url: '/mcp',
        config: { access: 'public' },
        schema: { hide: true },
        handler: async (_request, reply) => reply.code(405).header('Allow', 'POST').send(METHOD_NOT_ALLOWED),
      });
    }
  });
}
