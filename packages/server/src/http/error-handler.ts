import type { FastifyError, FastifyInstance, onRequestHookHandler } from 'fastify';
import type { Logger } from 'pino';
import { isDatabaseUnavailable, isUnstorableText } from '../db/connection.js';
import { CORS_HEADERS } from './cors.js';
import { ApiError, codeForStatus, errorBody, methodNotAllowed } from './errors.js';
import { hasEmptyParam, unknownRoute } from './guard.js';
import { describeValidationError } from './validation.js';

/** The longest path parameter the router takes (engagement links carry signed tokens in the path). */
export const MAX_PARAM_LENGTH = 4096;

/** The answer to a path segment over MAX_PARAM_LENGTH, whether the router or the not-found route meets it. */
export const PARAM_TOO_LONG = 'A path parameter of the URL is too long';

const FRAMEWORK_MESSAGES: Record<string, string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'Request body is too large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Unsupported Content-Type; send application/json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Content-Length does not match the body',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'Request body is empty',
};

/** The first path or query parameter holding a NUL character, if any. */
function fieldWithNul(values: unknown): string | undefined {
  if (!values || typeof values !== 'object') return undefined;
  for (const [name, value] of Object.entries(values)) {
    if ((Array.isArray(value) ? value : [value]).some((one) => typeof one === 'string' && one.includes('\0'))) return name;
  }
  return undefined;
}

/**
 * The one error handler: every failure leaves as `{statusCode, error, message, code}`. Server
 * faults are logged with the request id the answer names. `notFoundHook` guards unknown routes.
 */
export function installErrorHandler(app: FastifyInstance, log: Logger, notFoundHook: onRequestHookHandler): void {
  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) {
      reply.headers(error.headers);
      return reply.code(error.statusCode).send(errorBody(error.statusCode, error.code, error.message));
    }
    const fastifyError = error as FastifyError;
    if (fastifyError.validation) {
      const message = describeValidationError(fastifyError.validation as any, fastifyError.validationContext ?? 'body');
      return reply.code(400).send(errorBody(400, 'VALIDATION_ERROR', message));
    }
    const status = fastifyError.statusCode;
    if (status && status >= 400 && status < 500) {
      const message =
        FRAMEWORK_MESSAGES[fastifyError.code] ?? (error instanceof SyntaxError ? `Malformed JSON body: ${error.message}` : fastifyError.message);
      return reply.code(status).send(errorBody(status, codeForStatus(status), message));
    }
    if (isUnstorableText(error)) {
      // Bodies are checked as they are parsed (parse-json-body.ts); a path or query value reaches
      // the database, which refuses it: named here, from the request, at no cost to other requests.
      const field = fieldWithNul(request.params) ?? fieldWithNul(request.query);
      return reply.code(400).send(errorBody(400, 'VALIDATION_ERROR', `${field ?? 'Text'} must not contain the NUL character (\\u0000)`));
    }
    if (isDatabaseUnavailable(error)) {
      log.error({ err: error, reqId: request.id }, 'database unavailable');
      reply.header('Retry-After', '5');
      return reply.code(503).send(errorBody(503, 'SERVICE_UNAVAILABLE', `Service temporarily unavailable (request ${request.id})`));
    }
    log.error({ err: error, reqId: request.id }, 'unhandled error');
    return reply.code(500).send(errorBody(500, 'INTERNAL_ERROR', `Internal server error (request ${request.id})`));
  });

  // Fastify applies every lifecycle hook given here to the not-found route (its typings list only
  // preValidation and preHandler). The answer is given from onRequest, before the body is read: an
  // unknown path answers 404, 405 or 414 whatever its body, however large.
  const ROUTE_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
  /** Whether a route serves the path with this method; one matched only by leaving a parameter empty does not (guard.ts). */
  const serves = (method: (typeof ROUTE_METHODS)[number], path: string) => {
    const found = app.findRoute({ method, url: path });
    return Boolean(found) && !hasEmptyParam(found?.params);
  };
  const pathOf = (url: string) => url.split('?')[0];
  function unrouted(method: string, url: string): ApiError {
    const path = pathOf(url);
    // A segment over the router's parameter limit matches nothing, with any method: the router's
    // answer for it (framework-errors.ts) is the same 414.
    if (path.split('/').some((segment) => segment.length > MAX_PARAM_LENGTH)) return new ApiError('URI_TOO_LONG', PARAM_TOO_LONG);
    // A path that exists with other methods: 405 and the methods it has, as RFC 9110 asks.
    const allowed = ROUTE_METHODS.filter((other) => other !== method && serves(other, path));
    if (allowed.length === 0) return unknownRoute(method, path);
    // Only the routes open to any web page answer a preflight (cors.ts): their 405 carries the
    // CORS headers too, so the page's script can read it rather than a network error.
    return methodNotAllowed(method, path, allowed, allowed.includes('OPTIONS') ? CORS_HEADERS : {});
  }
  const onRequest: onRequestHookHandler = function (request, reply, done) {
    notFoundHook.call(this, request, reply, (error) => {
      if (!error) return done(unrouted(request.method, request.url));
      // Refused before the path is judged (the per-IP limit's 429): a path open to any web page
      // carries the CORS headers all the same, as its 405 would.
      if (serves('OPTIONS', pathOf(request.url))) reply.headers(CORS_HEADERS);
      done(error);
    });
  };
  const notFoundHooks = { onRequest } as Parameters<FastifyInstance['setNotFoundHandler']>[0];
  app.setNotFoundHandler(notFoundHooks, (request) => {
    throw unrouted(request.method, request.url);
  });
}
