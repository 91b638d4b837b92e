import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { errorResponses, pageQuery } from '../http/schemas.js';
import { queryRequestLog } from './query-request-log.js';

const Query = Type.Object({
  ...pageQuery(50),
  statusCode: Type.Optional(Type.Integer({ minimum: 100, maximum: 599 })),
  endpoint: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
});

const RequestLogPage = Type.Object({
  items: Type.Array(
    Type.Object({
      method: Type.String(),
      endpoint: Type.String(),
      statusCode: Type.Integer(),
      latencyMs: Type.Integer(),
      timestamp: Type.String({ format: 'date-time' }),
    }),
  ),
  total: Type.Integer(),
  page: Type.Integer(),
});

export function requestLogRoutes(app: FastifyInstance, deps: Deps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  api.get(
    '/v1/requests',
    {
      schema: {
        tags: ['account'],
        summary: "The caller's API request log, newest first",
        querystring: Query,
        response: { 200: RequestLogPage, ...errorResponses(400, 401, 429) },
      },
    },
    async (request) => {
      await deps.requestLog.flush();
      const { page, limit, statusCode, endpoint } = request.query;
      const { items, total } = await queryRequestLog(deps.db, { protocolId: request.auth!.protocol.id, page, limit, statusCode, endpoint });
      return {
        items: items.map((row) => ({
          method: row.method,
          endpoint: row.endpoint,
          statusCode: row.status_code,
          latencyMs: row.latency_ms,
          timestamp: row.created_at.toISOString(),
        })),
        total,
        page,
      };
    },
  );
}
