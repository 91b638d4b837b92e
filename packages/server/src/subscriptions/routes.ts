import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Channel } from '../channels/provider.js';
import type { Deps } from '../deps.js';
import { errorResponses } from '../http/schemas.js';
import { ChannelSchema } from '../notifications/schemas.js';
import { WalletSchema, walletNotRegistered } from '../wallet.js';
import { findSubscription, isRegistered, unsubscribe, upsertSubscription, type SubscriptionRow } from './subscription-store.js';

const Subscription = Type.Object({
  walletAddress: Type.String(),
  subscribed: Type.Boolean(),
  channels: Type.Array(Type.String()),
  subscribedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  unsubscribedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

const WalletParams = Type.Object({ wallet: WalletSchema });
const tags = ['subscriptions'];

function view(wallet: string, row: SubscriptionRow | undefined) {
  return {
    walletAddress: wallet,
    subscribed: row?.subscribed ?? false,
    channels: row?.channels ?? [],
    // An opt-out of a wallet that never subscribed is stored with no channels: it has no subscribedAt.
    subscribedAt: row && row.channels.length > 0 ? row.subscribed_at.toISOString() : null,
    unsubscribedAt: row?.unsubscribed_at?.toISOString() ?? null,
  };
}

async function requireRegistered(deps: Deps, wallet: string) {
  if (!(await isRegistered(deps.db, wallet))) throw walletNotRegistered(wallet);
}

/** POST /v1/subscriptions, GET and DELETE /v1/subscriptions/:wallet. */
export function subscriptionRoutes(app: FastifyInstance, deps: Deps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.post(
    '/v1/subscriptions',
    {
      schema: {
        tags,
        summary: 'Subscribe a registered wallet to this protocol on some channels (201 new, 200 updated)',
        body: Type.Object({ walletAddress: WalletSchema, channels: Type.Array(ChannelSchema, { minItems: 1, maxItems: 3, uniqueItems: true }) }),
        response: { 200: Subscription, 201: Subscription, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request, reply) => {
      const { walletAddress, channels } = request.body;
      // The write checks the identity itself, atomically with an erasure of it.
      const row = await upsertSubscription(deps.db, request.auth!.protocol.id, walletAddress, channels as Channel[], deps.now());
      if (!row) throw walletNotRegistered(walletAddress);
      return reply.code(row.created ? 201 : 200).send(view(walletAddress, row));
    },
  );

  api.get(
    '/v1/subscriptions/:wallet',
    {
      schema: { tags, summary: "A wallet's subscription to this protocol", params: WalletParams, response: { 200: Subscription, ...errorResponses(400, 401, 404, 429) } },
    },
    async (request) => {
      const { wallet } = request.params;
      await requireRegistered(deps, wallet);
      return view(wallet, await findSubscription(deps.db, request.auth!.protocol.id, wallet));
    },
  );

  api.delete(
    '/v1/subscriptions/:wallet',
    {
      schema: {
        tags,
        summary: "Unsubscribe: the wallet gets none of this protocol's messages until it subscribes again",
        params: WalletParams,
        response: { 200: Subscription, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) => {
      const { wallet } = request.params;
      const row = await unsubscribe(deps.db, request.auth!.protocol.id, wallet, deps.now());
      if (!row) throw walletNotRegistered(wallet);
      return view(wallet, row);
    },
  );
}
