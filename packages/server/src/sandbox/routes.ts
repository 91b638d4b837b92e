import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { errorResponses, pageQuery } from '../http/schemas.js';
import { ChannelSchema } from '../notifications/schemas.js';
import { WalletSchema } from '../wallet.js';

const Message = Type.Object({
  id: Type.String(),
  notificationId: Type.Union([Type.String(), Type.Null()]),
  environment: Type.String(),
  wallet: Type.String(),
  channel: Type.String(),
  subject: Type.Union([Type.String(), Type.Null()]),
  html: Type.Union([Type.String(), Type.Null()]),
  text: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
});

/** GET /v1/sandbox/messages: what the capture provider kept for this protocol. */
export function sandboxRoutes(app: FastifyInstance, deps: Deps): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/v1/sandbox/messages',
    {
      schema: {
        tags: ['sandbox'],
        summary: 'Messages kept by the capture provider (sandbox keys, and channels without a provider), newest first',
        querystring: Type.Object({ ...pageQuery(20), wallet: Type.Optional(WalletSchema), channel: Type.Optional(ChannelSchema) }),
        response: { 200: Type.Object({ data: Type.Array(Message), total: Type.Integer(), page: Type.Integer() }), ...errorResponses(400, 401, 429) },
      },
    },
    async (request) => {
      const { page, limit, wallet, channel } = request.query;
      const params: unknown[] = [request.auth!.protocol.id, wallet ?? null, channel ?? null];
      const filter = 'protocol_id = $1 AND ($2::text IS NULL OR wallet = $2) AND ($3::text IS NULL OR channel = $3)';
      const [{ total }] = await deps.db.query<{ total: number }>(`SELECT count(*)::int AS total FROM captured_messages WHERE ${filter}`, params);
      const rows = await deps.db.query<any>(
        `SELECT * FROM captured_messages WHERE ${filter} ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5`,
        [...params, limit, (page - 1) * limit],
      );
      return {
        data: rows.map((r) => ({
          id: r.id,
          notificationId: r.notification_id,
          environment: r.environment,
          wallet: r.wallet,
          channel: r.channel,
          subject: r.subject,
          html: r.html,
          text: r.text,
          createdAt: r.created_at.toISOString(),
        })),
        total,
        page,
      };
    },
  );
}
