import type { FastifyInstance } from 'fastify';
import { REFERENCE_PAGE, REFERENCE_PAGE_CSP } from './reference-page.js';

/** `GET /openapi.json` (the document) and `GET /docs` (a page rendering it); both public. */
export function openApiRoutes(app: FastifyInstance): void {
  app.get('/openapi.json', { config: { access: 'public' }, schema: { hide: true } }, async () => app.swagger());

  app.get('/docs', { config: { access: 'public' }, schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').header('Content-Security-Policy', REFERENCE_PAGE_CSP).send(REFERENCE_PAGE),
  );
}
