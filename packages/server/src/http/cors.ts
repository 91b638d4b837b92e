import type { FastifyInstance, onSendHookHandler } from 'fastify';

/**
 * Cross-origin use of routes that need no credentials and hold nothing of the caller's (the MCP
 * documentation endpoint, a wallet's self-registration): any web page may call them, after a
 * browser's OPTIONS preflight, and read the headers a client needs.
 */
export const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After',
};

const PREFLIGHT_MAX_AGE_S = 86_400;

/** An onSend hook putting the CORS headers on every answer of a route, errors included. */
export const withCorsHeaders: onSendHookHandler = (_request, reply, payload, done) => {
  reply.headers(CORS_HEADERS);
  done(null, payload);
};

/**
 * A browser's CORS preflight for `url`, answered 204: the route's `methods` may be called, with any
 * request headers the page names. Counted per client IP like the routes it opens. Listed in the
 * OpenAPI document under `listed.tags` when given, hidden otherwise.
 */
export function corsPreflight(app: FastifyInstance, url: string, methods: string[], listed?: { tags: string[] }): void {
  const schema = listed
    ? { tags: listed.tags, summary: `CORS preflight of ${methods.join(', ')} ${url} (204)`, security: [], response: { 204: { type: 'null', description: 'Allowed' } } }
    : { hide: true };
  app.options(url, { config: { access: 'public' }, schema, onSend: withCorsHeaders }, async (request, reply) =>
    reply
      .code(204)
      .headers({
        allow: [...methods, 'OPTIONS'].join(', '),
        'access-control-allow-methods': methods.join(', '),
        'access-control-allow-headers': request.headers['access-control-request-headers'] ?? 'content-type',
        'access-control-max-age': String(PREFLIGHT_MAX_AGE_S),
      })
      .send(),
  );
}
