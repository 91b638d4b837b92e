import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { errorResponses, pageQuery } from '../http/schemas.js';
import { ChannelSchema } from '../notifications/schemas.js';
import { WalletSchema } from '../wallet.js';
import { CapturedMessage, listCapturedMessages } from './captured-messages.js';

/**
 * GET /v1/sandbox/messages: what the capture provider kept for this protocol. GET
 * /v1/admin/sandbox/messages: everything it kept, the gateway's own messages (verification codes,
 * the Telegram bot's replies; protocol `herald`) included, for the operator of a gateway whose
 * channels have no provider, who has no other way to read a code.
 */
export function sandboxRoutes(app: FastifyInstance, deps: Deps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  api.get(
    '/v1/admin/sandbox/messages',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Every message the capture provider kept (all protocols, and the gateway\'s own: protocolId "herald"), newest first',
        querystring: Type.Object({
          ...pageQuery(20),
          protocolId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'One protocol\'s; "herald" for verification codes and bot replies' })),
          wallet: Type.Optional(WalletSchema),
          channel: Type.Optional(ChannelSchema),
        }),
        response: {
          200: Type.Object({ data: Type.Array(Type.Composite([Type.Object({ protocolId: Type.String() }), CapturedMessage])), total: Type.Integer(), page: Type.Integer() }),
          ...errorResponses(400, 401, 429),
        },
      },
    },
    async (request) => {
      const { page, limit, protocolId, wallet, channel } = request.query;
      return listCapturedMessages(deps.db, { protocolId, wallet, channel }, page, limit);
    },
  );

  api.get(
    '/v1/sandbox/messages',
    {
      schema: {
        tags: ['sandbox'],
        summary: 'Messages kept by the capture provider (sandbox keys, and channels without a provider), newest first',
        querystring: Type.Object({ ...pageQuery(20), wallet: Type.Optional(WalletSchema), channel: Type.Optional(ChannelSchema) }),
        response: { 200: Type.Object({ data: Type.Array(CapturedMessage), total: Type.Integer(), page: Type.Integer() }), ...errorResponses(400, 401, 429) },
      },
    },
    async (request) => {
      const { page, limit, wallet, channel } = request.query;
      // The response schema leaves out protocolId: it is the caller's own.
      return listCapturedMessages(deps.db, { protocolId: request.auth!.protocol.id, wallet, channel }, page, limit);
    },
  );
}
