import Fastify from 'fastify';

export interface BareRoute {
  url: string;
  /** GET answers a small JSON object; POST parses a JSON body and answers 202 with one. */
  path: string;
  close(): Promise<void>;
}

/**
 * The yardstick: a plain fastify() instance with one JSON route that does nothing. Started in the
 * benchmark's own process, like the gateway, so both run under the same conditions. Its POST twin
 * only reads the body Fastify parsed and answers 202: what receiving a JSON request and answering
 * it costs before any of the gateway's own work, shown beside the gateway's POST routes.
 */
export async function startBareRoute(): Promise<BareRoute> {
  const app = Fastify();
  app.get('/bare', async () => ({ ok: true }));
  app.post('/bare', async (request, reply) => reply.code(202).send({ ok: true, received: typeof request.body }));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url, path: '/bare', close: () => app.close() };
}
