import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { keyHolderOf } from '../auth/live-key.js';
import { creationKeyOf, IdempotencyKeyHeaders, keyedAnswer, refuseBodyKey } from '../creation-keys/creation-key.js';
import type { Deps } from '../deps.js';
import { errorResponses } from '../http/schemas.js';
import {
  changeEndpoint,
  createEndpoint,
  endpointDetail,
  listEndpointViews,
  removeEndpoint,
  requireEndpoint,
  requireLiveSender,
  rotateSecret,
} from './endpoint-service.js';
import { CreatedWebhook, CreateWebhookBody, RotatedWebhook, RotateSecretBody, UpdateWebhookBody, WebhookDetail, WebhookParams, WebhookView } from './schemas.js';
import { sendTestEvent } from './send-test-event.js';
import { WebhookSender } from './webhook-sender.js';

const tags = ['webhooks'];
const CREATE_FIELDS = Object.keys(CreateWebhookBody.properties);
const ROTATE_FIELDS = Object.keys(RotateSecretBody.properties);

/** Register, list, update, test and delete webhook endpoints (the caller's protocol only). */
export function webhookRoutes(app: FastifyInstance, deps: Deps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const sender = new WebhookSender({ allowPrivate: deps.config.allowPrivateWebhooks, timeoutMs: deps.config.webhookTimeoutMs, now: deps.now });
  app.addHook('onClose', async () => sender.close());
  // A test key is refused (403, after an unknown id's 404) before its body's fields are judged: a
  // request it may not make at all is not worth correcting. An empty id is left to the params' 400.
  const liveKeyFirst = (doing: string) => async (request: FastifyRequest) => {
    const { id } = request.params as { id?: string };
    if (id !== '') await requireLiveSender(deps, keyHolderOf(request), doing, id);
  };

  api.post(
    '/v1/webhooks',
    {
      preValidation: [liveKeyFirst('Registering a webhook endpoint'), refuseBodyKey('POST /v1/webhooks')],
      schema: {
        tags,
        summary: 'Register an endpoint; the answer holds its signing secret, shown only once (and to a repeat of the same Idempotency-Key)',
        headers: IdempotencyKeyHeaders,
        body: CreateWebhookBody,
        response: { 201: CreatedWebhook, ...errorResponses(400, 401, 403, 409, 415, 429) },
      },
    },
    async (request, reply) => {
      const key = creationKeyOf(request, 'POST /v1/webhooks', CREATE_FIELDS);
      const created = await createEndpoint(deps, { ...keyHolderOf(request), tier: request.auth!.protocol.tier }, request.body, key);
      return reply.code(201).header('cache-control', 'no-store').send(keyedAnswer(reply, created));
    },
  );

  api.get(
    '/v1/webhooks',
    { schema: { tags, summary: "The protocol's endpoints, oldest first (secrets are never shown)", response: { 200: Type.Array(WebhookView), ...errorResponses(401, 429) } } },
    async (request) => listEndpointViews(deps, request.auth!.protocol.id),
  );

  api.get(
    '/v1/webhooks/:id',
    {
      schema: {
        tags,
        summary: 'One endpoint, with its dates and why it is inactive (the secret is never shown)',
        params: WebhookParams,
        response: { 200: WebhookDetail, ...errorResponses(401, 404, 429) },
      },
    },
    async (request) => endpointDetail(deps, request.auth!.protocol.id, request.params.id),
  );

  api.post(
    '/v1/webhooks/:id/rotate-secret',
    {
      preValidation: [
        liveKeyFirst('Rotating a webhook secret'),
        refuseBodyKey('POST /v1/webhooks/:id/rotate-secret'),
        // The body is optional: none is the defaults (a JSON null is a body, and not an object).
        async (request) => {
          if (request.body === undefined) request.body = {};
        },
      ],
      schema: {
        tags,
        summary: 'Replace the signing secret; the new one is shown only in this answer, the old one stays valid for a while (default 24 h)',
        headers: IdempotencyKeyHeaders,
        params: WebhookParams,
        body: RotateSecretBody,
        response: { 200: RotatedWebhook, ...errorResponses(400, 401, 403, 404, 409, 415, 429) },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const key = creationKeyOf(request, `POST /v1/webhooks/${id}/rotate-secret`, ROTATE_FIELDS);
      const rotated = await rotateSecret(deps, keyHolderOf(request), id, request.body, key);
      return reply.header('cache-control', 'no-store').send(keyedAnswer(reply, rotated));
    },
  );

  api.patch(
    '/v1/webhooks/:id',
    {
      preValidation: liveKeyFirst('Changing a webhook endpoint'),
      schema: {
        tags,
        summary: 'Change url, events or isActive; turning an endpoint on again clears its failure streak',
        params: WebhookParams,
        body: UpdateWebhookBody,
        response: { 200: WebhookView, ...errorResponses(400, 401, 403, 404, 415, 429) },
      },
    },
    async (request) => changeEndpoint(deps, keyHolderOf(request), request.params.id, request.body),
  );

  api.post(
    '/v1/webhooks/:id/test',
    {
      schema: {
        tags,
        summary: 'Send a signed synthetic notification.delivered to this endpoint now; sent = it answered 2xx',
        params: WebhookParams,
        response: { 200: Type.Object({ sent: Type.Boolean() }), ...errorResponses(401, 404, 429) },
      },
    },
    async (request) => sendTestEvent(deps, sender, await requireEndpoint(deps, request.auth!.protocol.id, request.params.id), request.auth!.environment),
  );

  api.delete(
    '/v1/webhooks/:id',
    {
      schema: {
        tags,
        summary: 'Delete an endpoint and its delivery log',
        params: WebhookParams,
        response: { 204: Type.Null({ description: 'No body' }), ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await removeEndpoint(deps, keyHolderOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
}
