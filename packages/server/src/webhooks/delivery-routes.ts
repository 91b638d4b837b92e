import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { errorResponses } from '../http/schemas.js';
import { deliveryLogPage, replayDelivery } from './delivery-log.js';
import { DeliveryPage, DeliveryParams, DeliveryQuery, DeliveryView, WebhookParams } from './schemas.js';

const tags = ['webhooks'];

/** An endpoint's delivery log and replay. */
export function webhookDeliveryRoutes(app: FastifyInstance, deps: Deps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.get(
    '/v1/webhooks/:id/deliveries',
    {
      schema: {
        tags,
        summary: "The endpoint's deliveries, newest first, each with every attempt",
        params: WebhookParams,
        querystring: DeliveryQuery,
        response: { 200: DeliveryPage, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) => deliveryLogPage(deps, request.auth!.protocol.id, request.params.id, request.query),
  );

  api.post(
    '/v1/webhooks/:id/deliveries/:deliveryId/retry',
    {
      schema: {
        tags,
        summary: 'Queue a delivery again, due now, with a fresh retry schedule (202: accepted, not yet sent)',
        params: DeliveryParams,
        response: { 202: DeliveryView, ...errorResponses(401, 404, 409, 429) },
      },
    },
    async (request, reply) => reply.code(202).send(await replayDelivery(deps, request.auth!.protocol.id, request.params.id, request.params.deliveryId)),
  );
}
