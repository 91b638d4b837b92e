import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { creationKeyOf, IdempotencyKeyHeaders, keyedAnswer, refuseBodyKey } from '../creation-keys/creation-key.js';
import { ApiError } from '../http/errors.js';
import { refuseBodyField } from '../http/refuse-body-field.js';
import { errorResponses } from '../http/schemas.js';
import type { NotificationStatus } from '../notifications/notification-store.js';
import { CategorySchema } from '../notifications/schemas.js';
import { countBroadcastStatuses, findBroadcast } from './broadcast-store.js';
import { sendBroadcast } from './send-broadcast.js';

const tags = ['broadcasts'];
const STATUSES: readonly NotificationStatus[] = ['queued', 'sending', 'delivered', 'bounced', 'failed', 'opted_out'];

const BroadcastBody = Type.Object({
  subject: Type.String({ minLength: 1, maxLength: 998 }),
  body: Type.String({ minLength: 1, description: 'Markdown; the size limit depends on the tier' }),
  category: CategorySchema,
  receipt: Type.Optional(Type.Boolean({ description: 'Request an on-chain receipt for every message' })),
  templateId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  templateVariables: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'The same values for every subscriber' })),
});

const BROADCAST_FIELDS = Object.keys(BroadcastBody.properties);

/** Fields that name a recipient in other calls (notify, subscriptions): refused in a broadcast. */
const TARGET_FIELDS = ['wallet', 'walletAddress', 'wallets', 'recipients', 'to'] as const;
const CHANNEL_FIELDS = ['channel', 'channels', 'preferredChannel'] as const;
/** A schedule's timing fields: a broadcast goes out when it is accepted. */
const TIMING_FIELDS = ['scheduledFor', 'cronExpr', 'timezone'] as const;

const Accepted = Type.Object({
  broadcast_id: Type.String(),
  queued_count: Type.Integer({ description: 'Subscribers with a deliverable channel: one queued notification each' }),
  total_subscribers: Type.Integer({ description: 'Registered wallets with an active subscription to the protocol' }),
  estimated_delivery_s: Type.Integer(),
});

const Counts = Type.Object(Object.fromEntries(STATUSES.map((s) => [s, Type.Integer()])) as Record<NotificationStatus, ReturnType<typeof Type.Integer>>);

const BroadcastRecord = Type.Object({
  broadcast_id: Type.String(),
  subject: Type.String(),
  category: Type.String(),
  environment: Type.String(),
  write_receipt: Type.Boolean(),
  template_id: Type.Union([Type.String(), Type.Null()]),
  template_version: Type.Union([Type.Integer(), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  total_subscribers: Type.Integer(),
  queued_count: Type.Integer(),
  counts: Counts,
});

/** POST /v1/broadcast (Growth tier and above) and GET /v1/broadcasts/:id. */
export function broadcastRoutes(app: FastifyInstance, deps: Deps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.post(
    '/v1/broadcast',
    {
      // The tier gate answers before the body is read, as for templates.
      onRequest: async (request) => {
        if (request.auth!.protocol.tier < 1) throw new ApiError('TIER_REQUIRED', 'Broadcast needs the Growth tier (1) or above');
      },
      preValidation: [
        async (request) => {
          // Unknown fields are ignored everywhere, but a recipient or channel given here would be
          // ignored by a call that messages every subscriber: that mistake is refused before anything is sent.
          for (const field of TARGET_FIELDS) {
            refuseBodyField(request.body, field, 'a broadcast goes to every active subscriber and takes no recipient; send to one wallet with POST /v1/notify');
          }
          // Likewise a channel: each subscriber gets it on the channels they subscribed with.
          for (const field of CHANNEL_FIELDS) {
            refuseBodyField(request.body, field, 'a broadcast reaches each subscriber on the channels they subscribed with and takes no channel');
          }
          // A time would be ignored and the message sent at once.
          for (const field of TIMING_FIELDS) {
            refuseBodyField(request.body, field, 'a broadcast is sent when it is accepted and cannot be scheduled; schedule a send to one wallet with POST /v1/schedule');
          }
          // And a priority: a broadcast's messages are all `normal` (no SMS fallback for a message to everyone).
          refuseBodyField(request.body, 'priority', 'a broadcast\'s messages have normal priority; priority applies to a send to one wallet (POST /v1/notify)');
        },
        refuseBodyKey('POST /v1/broadcast'),
      ],
      schema: {
        tags,
        summary: 'Send one message to every active subscriber of the protocol',
        headers: IdempotencyKeyHeaders,
        body: BroadcastBody,
        response: { 202: Accepted, ...errorResponses(400, 401, 402, 403, 404, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const { protocol, environment } = request.auth!;
      const key = creationKeyOf(request, 'POST /v1/broadcast', BROADCAST_FIELDS);
      // As the send routes: an idle gateway's last queue sample may be long out of date.
      const sampling = deps.estimator.fresh();
      if (sampling) await sampling;
      return reply.code(202).send(keyedAnswer(reply, await sendBroadcast(deps, { protocol, environment }, request.body, key)));
    },
  );

  api.get(
    '/v1/broadcasts/:id',
    {
      schema: {
        tags,
        summary: "A broadcast and its notifications' live counts by status",
        params: Type.Object({ id: Type.String({ minLength: 1 }) }),
        response: { 200: BroadcastRecord, ...errorResponses(401, 404, 429) },
      },
    },
    async (request) => {
      const row = await findBroadcast(deps.db, request.auth!.protocol.id, request.params.id);
      if (!row) throw new ApiError('BROADCAST_NOT_FOUND', `Broadcast ${request.params.id} not found`);
      const counts = await countBroadcastStatuses(deps.db, row.id);
      return {
        broadcast_id: row.id,
        subject: row.subject,
        category: row.category,
        environment: row.environment,
        write_receipt: row.write_receipt,
        template_id: row.template_id,
        template_version: row.template_version,
        created_at: row.created_at.toISOString(),
        total_subscribers: row.total_subscribers,
        queued_count: row.queued_count,
        counts: Object.fromEntries(STATUSES.map((s) => [s, counts.get(s) ?? 0])) as Record<NotificationStatus, number>,
      };
    },
  );
}
