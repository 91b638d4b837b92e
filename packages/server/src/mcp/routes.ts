import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Deps } from '../deps.js';
import { ApiError } from '../http/errors.js';
import { checkIpLimit, rateLimitExceeded, setRateHeaders } from '../http/guard.js';
import { corsPreflight, withCorsHeaders } from '../http/cors.js';
import { unreadableBody } from '../http/parse-json-body.js';
import { acceptsJson } from './accepts-json.js';
import { connectMcpServer, SERVED_METHODS } from './create-mcp-server.js';
import { buildHeraldTools, type HeraldTool } from './herald-tools.js';
import { loadDocsLibrary } from './load-docs-library.js';
import { idOf, INTERNAL_ERROR, jsonRpcError, MAX_BATCH, metaFault, readJsonRpcBody, SERVER_ERROR, withoutMeta, type JsonRpcBody } from './read-jsonrpc-body.js';

const METHOD_NOT_ALLOWED = jsonRpcError(SERVER_ERROR, 'Method not allowed: this endpoint is stateless, send JSON-RPC with POST');
// Ours, not the transport's: it would ask for text/event-stream too, which this endpoint never sends.
const NOT_ACCEPTABLE = jsonRpcError(SERVER_ERROR, 'Not Acceptable: the client must accept application/json');

const TRANSPORT_ACCEPT = 'application/json, text/event-stream';

const ALLOWED_METHODS = 'POST, OPTIONS';

/**
 * The request as the SDK's web-standard transport reads it: the client's headers, with an Accept
 * header the transport takes (it asks for SSE too, which this endpoint never sends; acceptsJson
 * has already checked that the client reads JSON). The body is handed over parsed.
 */
function transportRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || ['host', 'connection', 'content-length', 'transfer-encoding', 'accept'].includes(name)) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  headers.set('accept', TRANSPORT_ACCEPT);
  return new Request('http://localhost/mcp', { method: 'POST', headers });
}

/**
 * A batch's members count against the client's limit one by one, as requests of their own (the
 * guard has counted the first): otherwise one request of a few kilobytes, fifty tools/call of the
 * whole context, would be answered with megabytes for the price of one.
 */
async function chargeBatch(deps: Pick<Deps, 'limiter' | 'config'>, request: FastifyRequest, reply: FastifyReply, members: number): Promise<void> {
  for (let i = 1; i < members; i++) {
    const result = await checkIpLimit(deps, request.ip);
    setRateHeaders(reply, result);
    if (!result.allowed) throw rateLimitExceeded(result);
  }
}

/**
 * One JSON-RPC message served by a fresh stateless transport and server: its HTTP status and its
 * answer's text (none for a notification).
 */
async function serveOne(tools: HeraldTool[], request: FastifyRequest, message: unknown): Promise<{ status: number; text: string }> {
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  const server = await connectMcpServer(tools, transport);
  try {
    const response = await transport.handleRequest(transportRequest(request), { parsedBody: message });
    return { status: response.status, text: await response.text() };
  } finally {
    await transport.close();
    await server.close();
  }
}

/** Whether the transport will refuse the request's MCP-Protocol-Version header, as it reads it. */
function refusesProtocolVersion(request: FastifyRequest): boolean {
  const version = transportRequest(request).headers.get('mcp-protocol-version');
  return version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version);
}

/** The id of a body's lone request, which its error answers carry; null for a batch (JSON-RPC 2.0 §6). */
function loneId(body: JsonRpcBody): string | number | null {
  const [first] = body.members;
  return !body.batch && first && 'message' in first ? idOf(first.message) : null;
}

/**
 * A refusal the transport writes before it reads the message (an unsupported MCP-Protocol-Version)
 * has a null id; a lone request's id is known, so its answer carries it.
 */
function withLoneId(body: JsonRpcBody, status: number, text: string): string {
  if (status < 400 || !text) return text;
  let answer: { id?: unknown; error?: unknown };
  try {
    answer = JSON.parse(text) as typeof answer;
  } catch {
    return text;
  }
  if (answer.error === undefined || answer.id !== null) return text;
  return JSON.stringify({ ...answer, id: loneId(body) });
}

/**
 * Serves a body's messages one at a time, so each member of a batch is judged on its own
 * (JSON-RPC 2.0 §6): members sharing an id each get their answer, and an `initialize` is served
 * like any other member. A lone message is answered as the transport answers it. In a batch, the
 * answers keep the members' order, invalid members' -32600 errors among them; a refusal of the
 * HTTP request itself (a header the transport refuses, such as an unsupported MCP-Protocol-Version)
 * answers the whole request, as it would any member.
 */
async function answerMembers(tools: HeraldTool[], request: FastifyRequest, body: JsonRpcBody): Promise<{ status: number; payload: string | undefined }> {
  const answers: unknown[] = [];
  for (const member of body.members) {
    if ('invalid' in member) {
      answers.push(member.invalid);
      continue;
    }
    const fault = member.badMeta ? metaFault(member.message, SERVED_METHODS) : undefined;
    // The transport refuses an unsupported MCP-Protocol-Version before it reads any message.
    if (fault && 'answer' in fault && !refusesProtocolVersion(request)) {
      if (!body.batch) return fault.answer ? { status: 200, payload: JSON.stringify(fault.answer) } : { status: 202, payload: undefined };
      if (fault.answer) answers.push(fault.answer);
      continue;
    }
    const message = !fault ? member.message : 'message' in fault ? fault.message : withoutMeta(member.message);
    const { status, text } = await serveOne(tools, request, message);
    if (!body.batch || status >= 400) return { status, payload: withLoneId(body, status, text) || undefined };
    if (text) answers.push(JSON.parse(text));
  }
  // Only notifications, all valid: nothing to answer (202), as for a lone notification.
  if (answers.length === 0) return { status: 202, payload: undefined };
  return { status: 200, payload: JSON.stringify(answers) };
}

async function answerMcp(deps: Deps, tools: HeraldTool[], request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const log = deps.log;
  // A batch larger than a second's allowance of the per-IP limit could never be served: refused as such.
  const body = readJsonRpcBody(request.body as Buffer | undefined, Math.min(MAX_BATCH, deps.config.ipRateLimit));
  if ('error' in body) {
    // A batch of invalid members is answered member by member too, and charged as such.
    if (Array.isArray(body.error)) await chargeBatch(deps, request, reply, body.error.length);
    return reply.code(400).send(body.error);
  }
  if (body.batch) await chargeBatch(deps, request, reply, body.members.length);
  if (!acceptsJson(request.headers.accept)) return reply.code(406).send({ ...NOT_ACCEPTABLE, id: loneId(body) });
  try {
    const { status, payload } = await answerMembers(tools, request, body);
    reply.code(status);
    if (payload === undefined) return reply.send();
    return reply.type('application/json; charset=utf-8').send(payload);
  } catch (error) {
    log.error({ err: error, reqId: request.id }, 'MCP request failed');
    return reply.code(500).send(jsonRpcError(INTERNAL_ERROR, `Internal error (request ${request.id})`, loneId(body)));
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
    // The body reaches the handler as bytes, so a malformed one is answered -32700 by this endpoint.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      const unreadable = unreadableBody(request.headers);
      if (unreadable) return done(new ApiError('UNSUPPORTED_MEDIA_TYPE', `Unsupported Media Type: ${unreadable}`), undefined);
      done(null, body);
    });
    installJsonRpcErrorHandler(scope, deps.log);
    // Cross-origin use: public documentation, no credentials (http/cors.ts).
    scope.addHook('onSend', withCorsHeaders);

    // `/mcp/` too: client configurations often carry a trailing slash.
    for (const url of ['/mcp', '/mcp/']) {
      const hide = url !== '/mcp';
      scope.post(
        url,
        {
          config: { access: 'public' },
          schema: {
            hide,
            tags: ['mcp'],
            summary: 'MCP documentation endpoint (JSON-RPC 2.0 over Streamable HTTP)',
            description:
              'Stateless MCP server answering JSON. Methods: initialize, ping, tools/list, tools/call (and notifications such as notifications/initialized, answered 202). Tools: get_herald_context, search_herald_docs {query, maxResults}, get_integration_example {pattern}, get_doc_page {slug}. No authentication; Content-Type: application/json is enough (no Accept header needed).',
          },
        },
        (request, reply) => answerMcp(deps, tools, request, reply),
      );
      corsPreflight(scope, url, ['POST']);
      // Every other method is refused in JSON-RPC too (HEAD comes with GET).
      scope.route({
        method: ['GET', 'DELETE', 'PUT', 'PATCH'],
        url,
        config: { access: 'public' },
        schema: { hide: true },
        handler: async (_request, reply) => reply.code(405).header('Allow', ALLOWED_METHODS).send(METHOD_NOT_ALLOWED),
      });
    }
  });
}
