import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { accountRoutes } from './account/routes.js';
import { adminRoutes } from './admin/routes.js';
import type { Deps } from './deps.js';
import { healthRoutes } from './health/routes.js';
import { mcpRoutes } from './mcp/routes.js';
import { registerOpenApi } from './openapi/register-openapi.js';
import { openApiRoutes } from './openapi/routes.js';
import { identityRoutes } from './identities/routes.js';
import { installErrorHandler, MAX_PARAM_LENGTH } from './http/error-handler.js';
import { installGuard, notFoundGuard } from './http/guard.js';
import { unroutedAnswers } from './http/framework-errors.js';
import { unreadableBody, parseJsonBody, utf8Text } from './http/parse-json-body.js';
import { ErrorSchema } from './http/schemas.js';
import { describeValidationError, validatorCompiler } from './http/validation.js';
import { ApiError } from './http/errors.js';
import type { ErrorObject } from 'ajv';
import { engagementRoutes } from './engagement/routes.js';
import { previewRoutes } from './notifications/preview-route.js';
import { notificationRoutes } from './notifications/routes.js';
import { sandboxRoutes } from './sandbox/routes.js';
import { scheduleRoutes } from './schedules/routes.js';
import { templateRoutes } from './templates/routes.js';
import { broadcastRoutes } from './broadcasts/routes.js';
import { reportingRoutes } from './reporting/routes.js';
import { receiptRoutes } from './receipts/routes.js';
import { requestLogRoutes } from './request-log/routes.js';
import { subscriptionRoutes } from './subscriptions/routes.js';
import { webhookDeliveryRoutes } from './webhooks/delivery-routes.js';
import { webhookRoutes } from './webhooks/routes.js';
import { requestIdGenerator } from './http/request-id.js';

/**
 * Routes a program embedding the gateway adds to it. They sit behind the same authentication,
 * rate limits, request log and error model as every /v1 route.
 */
export type ExtraRoutes = (app: FastifyInstance) => void;

/** Builds the HTTP app: every route module is registered here, by name. */
export async function buildApp(deps: Deps, extraRoutes?: ExtraRoutes): Promise<FastifyInstance> {
  const app = await baseApp(deps, { openApi: true });
  healthRoutes(app, deps);
  accountRoutes(app, deps);
  requestLogRoutes(app, deps);
  adminRoutes(app, deps);
  notificationRoutes(app, deps);
  previewRoutes(app, deps);
  subscriptionRoutes(app, deps);
  sandboxRoutes(app, deps);
  engagementRoutes(app, deps);
  identityRoutes(app, deps);

  scheduleRoutes(app, deps);
  templateRoutes(app, deps);
  broadcastRoutes(app, deps);
  reportingRoutes(app, deps);
  webhookRoutes(app, deps);
  webhookDeliveryRoutes(app, deps);
  receiptRoutes(app, deps);

  await mcpRoutes(app, deps);
  openApiRoutes(app);
  extraRoutes?.(app);

  return app;
}

/**
 * The worker role's HTTP app (HERALD_HEALTH_PORT): `GET /health` alone, for a process manager's
 * liveness probe, with the limits and error shape of the API.
 */
export async function buildHealthApp(deps: Deps): Promise<FastifyInstance> {
  const app = await baseApp(deps, { openApi: false });
  healthRoutes(app, deps);
  return app;
}

/** How long a request may take to arrive in full (408 after). */
const REQUEST_TIMEOUT_MS = 30_000;

/** Fastify with the gateway's parsers, guard (limits, authentication, request log) and error shape; no routes yet. */
async function baseApp(deps: Deps, { openApi }: { openApi: boolean }): Promise<FastifyInstance> {
  const nextRequestId = requestIdGenerator();
  const unrouted = unroutedAnswers(deps, nextRequestId);
  const app = Fastify({
    // No logger of Fastify's: per-request lines would cost more than the request, and a logger
    // makes Fastify build a child logger and listen for the end of every response. The gateway
    // logs through deps.log, errors with their request id (http/error-handler.ts).
    logger: false,
    bodyLimit: deps.config.bodyLimitBytes,
    // Which X-Forwarded-For entry is the client's (request.ip, the per-IP limit's key).
    trustProxy: deps.config.trustProxy,
    genReqId: (req) => nextRequestId(req.headers['x-request-id']),
    // Validation failures become the contract's error directly (Fastify's own builds an Error with a stack).
    schemaErrorFormatter: (errors, dataVar) => new ApiError('VALIDATION_ERROR', describeValidationError(errors as ErrorObject[], dataVar)),
    // Slow or stalled clients are cut off instead of holding a socket forever.
    connectionTimeout: 0,
    requestTimeout: REQUEST_TIMEOUT_MS,
    keepAliveTimeout: 5_000,
    // Node enforces headersTimeout and requestTimeout by sweeping connections, every 30 s by
    // default: a slow client then held its socket up to 30 s past either. Sweep every second.
    // Requests without a Host header are refused by the guard, in the one error shape.
    http: { connectionsCheckingInterval: 1_000, requireHostHeader: false },
    // A request that reaches us while closing (on an open keep-alive socket) is served in full and
    // answered with `Connection: close`: the database closes only after the app, and Fastify's own
    // 503 for this case has no `code`, breaking the one error shape.
    return503OnClosing: false,
    // Engagement links carry signed tokens in the path.
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // URLs the router refuses and requests Node's parser refuses get the one error shape too.
    frameworkErrors: unrouted.frameworkErrors,
    clientErrorHandler: unrouted.clientErrorHandler,
  });
  app.server.headersTimeout = 10_000;
  serveEveryMethod(app, REQUEST_TIMEOUT_MS);
  app.setValidatorCompiler(validatorCompiler);
  app.addSchema(ErrorSchema);
  // An empty body with Content-Type: application/json is read as "no body" rather than an error.
  // Only JSON is accepted: anything else (including text/plain) is 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    // An unknown path (or a known one with another method) answers 404 or 405 whatever its body.
    if (request.is404) return done(null, undefined);
    try {
      const unreadable = unreadableBody(request.headers);
      if (unreadable) throw new ApiError('UNSUPPORTED_MEDIA_TYPE', unreadable);
      done(null, parseJsonBody(utf8Text(body as Buffer)));
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  if (openApi) await registerOpenApi(app, deps);

  // The guard first: it gives every route, and the not-found handler, its hook as they are set.
  installGuard(app, deps, unrouted.answeredStatus);
  installErrorHandler(app, deps.log, notFoundGuard(app));
  return app;
}

/**
 * Requests Node would answer or drop by itself go through the app like any other, so they get its
 * answer, headers and error shape: a CONNECT (which Node hands over as a bare socket and, with no
 * one listening, closes without a word) is answered 405 or 404 and its connection closed, and an
 * `Expect` other than `100-continue` (which Node answers with a bare 417) is served as if absent,
 * as RFC 9110 §10.1.1 allows.
 *
 * A CONNECT's socket is out of the HTTP server's hands (no timeouts, not closed with idle
 * connections), so the app keeps it: what the client sends after is discarded, the socket is
 * destroyed a moment after the answer (or after the request timeout, answered or not), and closing
 * the app destroys any left. A CONNECT pipelined behind a request not yet answered has a socket
 * that request's answer still owns: it is destroyed, as Node would.
 */
function serveEveryMethod(app: FastifyInstance, requestTimeoutMs: number): void {
  const tunnels = new Set<Socket>();
  app.addHook('preClose', (done) => {
    for (const socket of tunnels) socket.destroy();
    done();
  });
  app.server.on('connect', (request: IncomingMessage, duplex: Duplex) => {
    const socket = duplex as Socket;
    socket.on('error', () => socket.destroy());
    const response = new ServerResponse(request);
    response.shouldKeepAlive = false;
    try {
      response.assignSocket(socket);
    } catch {
      return socket.destroy();
    }
    tunnels.add(socket);
    const deadline = setTimeout(() => socket.destroy(), requestTimeoutMs).unref();
    socket.once('close', () => {
      clearTimeout(deadline);
      tunnels.delete(socket);
    });
    socket.resume();
    response.on('finish', () => {
      response.detachSocket(socket);
      socket.end();
      setTimeout(() => socket.destroy(), 1000).unref();
    });
    app.routing(request, response);
  });
  app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => app.routing(request, response));
}
