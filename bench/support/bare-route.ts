import Fastify from 'fastify';

export interface BareRoute {
  url: string;
  path: string;
  close(): Promise<void>;
}

/**
 * The yardstick: a plain fastify() instance with one JSON route that does nothing. Started in the
 * benchmark's own process, like the gateway, so both run under the same conditions.
 */
export async function startBareRoute(): Promise<BareRoute> {
  const app = Fastify();
  app.get('/bare', async () => ({ ok: true }));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url, path: '/bare', close: () => app.close() };
}
