import type { Logger } from 'pino';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { accountRoutes } from './account/routes.js';
import { adminRoutes } from './admin/routes.js';
import type { Deps } from './deps.js';
import { healthRoutes } from './health/routes.js';
import { mcpRoutes } from './mcp/routes.js';
import { registerOpenApi } from './openapi/register-openapi.js';
import { openApiRoutes } from './openapi/routes.js';
import { identityRoutes } from './identities/routes.js';
import { installErrorHandler } from './http/error-handler.js';
import { installGuard } from './http/guard.js';
import { answerClientError, answerFrameworkError } from './http/framework-errors.js';
import { parseJsonBody } from './http/parse-json-body.js';
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
import { RequestLogger, requestIdGenerator } from './http/request-logger.js';

/**
 * Routes a program embedding the gateway adds to it. They sit behind the same authentication,
 * rate limits, request log and error model as every /v1 route.
 */
export type ExtraRoutes = (app: FastifyInstance) => void;

/** Builds the HTTP app: every route module is registered here, by name. */
export async function buildApp(deps: Deps, extraRoutes?: ExtraRoutes): Promise<FastifyInstance> {
  const nextRequestId = requestIdGenerator();
  const app = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    // Per-request lines would cost more than the request; errors are logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: deps.config.bodyLimitBytes,
    genReqId: (req) => nextRequestId(req.headers['x-request-id']),
    // Validation failures become the contract's error directly (Fastify's own builds an Error with a stack).
    schemaErrorFormatter: (errors, dataVar) => new ApiError('VALIDATION_ERROR', describeValidationError(errors as ErrorObject[], dataVar)),
    childLoggerFactory: (logger, bindings, options) => new RequestLogger(logger as Logger, bindings, options) as unknown as FastifyBaseLogger,
    // Slow or stalled clients are cut off instead of holding a socket forever.
    connectionTimeout: 0,
    requestTimeout: 30_000,
    keepAliveTimeout: 5_000,
    // Node enforces headersTimeout and requestTimeout by sweeping connections, every 30 s by
    // default: a slow client then held its socket up to 30 s past either. Sweep every second.
    http: { connectionsCheckingInterval: 1_000 },
    // A request that reaches us while closing (on an open keep-alive socket) is served in full and
    // answered with `Connection: close`: the database closes only after the app, and Fastify's own
    // 503 for this case has no `code`, breaking the one error shape.
    return503OnClosing: false,
    // Engagement links carry signed tokens in the path.
    routerOptions: { maxParamLength: 4096 },
    // URLs the router refuses and requests Node's parser refuses get the one error shape too.
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
  });
  app.server.headersTimeout = 10_000;
  app.setValidatorCompiler(validatorCompiler);
  app.addSchema(ErrorSchema);
  // Set first thing (callback style: no promise per request), so every answer carries it, errors included.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    done();
  });
  // An empty body with Content-Type: application/json is read as "no body" rather than an error.
  // Only JSON is accepted: anything else (including text/plain) is 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  await registerOpenApi(app, deps);

  installErrorHandler(app);
  installGuard(app, deps);

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
