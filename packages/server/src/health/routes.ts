import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { errorBody } from '../http/errors.js';

const HealthSchema = Type.Object({
  status: Type.String(),
  timestamp: Type.String({ format: 'date-time' }),
  database: Type.String(),
  role: Type.String(),
  channels: Type.Object({ email: Type.String(), telegram: Type.String(), sms: Type.String() }, { description: 'Provider carrying each channel; capture = stored, not sent' }),
});

const UnhealthySchema = Type.Object({
  statusCode: Type.Integer(),
  error: Type.String(),
  message: Type.String(),
  code: Type.String(),
  status: Type.String(),
  timestamp: Type.String({ format: 'date-time' }),
});

export function healthRoutes(app: FastifyInstance, deps: Deps): void {
  app.get(
    '/health',
    {
      config: { access: 'public' },
      schema: { tags: ['health'], summary: 'Liveness and database reachability', response: { 200: HealthSchema, 503: UnhealthySchema } },
    },
    async (_request, reply) => {
      const timestamp = deps.now().toISOString();
      try {
        await withTimeout(deps.db.query('SELECT 1'), 2000);
      } catch {
        // As every other 503 of the gateway: worth asking again in a few seconds.
        return reply
          .code(503)
          .header('Retry-After', '5')
          .send({ ...errorBody(503, 'SERVICE_UNAVAILABLE', 'Database unreachable'), status: 'unavailable', timestamp });
      }
      return { status: 'ok', timestamp, database: deps.db.engine, role: deps.config.role, channels: deps.channels.describe() };
    },
  );
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
