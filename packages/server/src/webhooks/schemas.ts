import { Type, type TSchema } from '@sinclair/typebox';
import { EVENT_TYPES, type EventType } from '../events/record-event.js';
import { IsoDateTime, pageQuery } from '../http/schemas.js';
import { DEFAULT_PREVIOUS_SECRET_SECONDS } from './webhook-secret.js';

// A plain enum (not a union of literals) so a wrong value is reported as "must be one of: …".
export const EventTypeSchema = Type.Unsafe<EventType>({ type: 'string', enum: [...EVENT_TYPES], description: 'Event type' });

const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'Absolute http or https URL of the receiver' });
const Events = Type.Array(EventTypeSchema, { minItems: 1, uniqueItems: true, description: 'Event types sent to this endpoint (no repeats)' });

export const CreateWebhookBody = Type.Object({ url: Url, events: Events, isActive: Type.Optional(Type.Boolean({ default: true })) });

export const UpdateWebhookBody = Type.Object(
  { url: Type.Optional(Url), events: Type.Optional(Events), isActive: Type.Optional(Type.Boolean()) },
  { minProperties: 1 },
);

export const WebhookView = Type.Object({
  id: Type.String(),
  url: Type.String(),
  events: Type.Array(EventTypeSchema),
  isActive: Type.Boolean(),
});

export const CreatedWebhook = Type.Composite([
  WebhookView,
  Type.Object({ secret: Type.String({ description: 'Signing secret (whsec_…); shown only in this answer' }) }),
]);

const SECONDS_IN_WEEK = 7 * 24 * 60 * 60;

export const RotateSecretBody = Type.Object({
  previousSecretExpiresInSeconds: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: SECONDS_IN_WEEK,
      default: DEFAULT_PREVIOUS_SECRET_SECONDS,
      description: 'How long the secret replaced stays valid (requests are signed with both until then); 0 drops it at once. Default 24 hours, at most 7 days.',
    }),
  ),
});

export const WebhookDetail = Type.Composite([
  WebhookView,
  Type.Object({
    createdAt: IsoDateTime,
    updatedAt: IsoDateTime,
    disabledReason: Type.Union([Type.String(), Type.Null()], { description: 'Why the endpoint was set inactive, when it was' }),
    previousSecretExpiresAt: Type.Union([IsoDateTime, Type.Null()], { description: 'Until when the secret a rotation replaced is still signed with; null when none is' }),
  }),
]);

export const RotatedWebhook = Type.Composite([
  WebhookView,
  Type.Object({
    secret: Type.String({ description: 'The new signing secret (whsec_…); shown only in this answer' }),
    previousSecretExpiresAt: Type.Union([IsoDateTime, Type.Null()], { description: 'Until when the secret replaced is still signed with; null when it was dropped at once' }),
  }),
]);

export const WebhookParams = Type.Object({ id: Type.String({ minLength: 1 }) });
export const DeliveryParams = Type.Object({ id: Type.String({ minLength: 1 }), deliveryId: Type.String({ minLength: 1 }) });
export const DeliveryQuery = Type.Object(pageQuery(20));

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const AttemptView = Type.Object({
  statusCode: Type.Union([Type.Integer(), Type.Null()], { description: "The receiver's HTTP status; null when no answer came" }),
  latencyMs: Type.Integer(),
  responseBody: Type.Union([Type.String(), Type.Null()], { description: 'First 1 KB of the answer' }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why the attempt failed; null on success' }),
  createdAt: IsoDateTime,
});

export const DeliveryView = Type.Object({
  id: Type.String(),
  eventId: Type.String(),
  eventType: EventTypeSchema,
  status: Type.Unsafe<'pending' | 'succeeded' | 'failed'>({ type: 'string', enum: ['pending', 'succeeded', 'failed'] }),
  nextAttemptAt: Nullable(IsoDateTime),
  createdAt: IsoDateTime,
  completedAt: Nullable(IsoDateTime),
  lastStatusCode: Nullable(Type.Integer()),
  lastError: Nullable(Type.String()),
  event: Type.Object(
    {
      id: Type.String(),
      type: EventTypeSchema,
      created: Type.Integer({ description: 'Unix time in seconds' }),
      data: Type.Object({}, { additionalProperties: true }),
    },
    { description: 'The envelope sent as the request body' },
  ),
  attempts: Type.Array(AttemptView, { description: 'Every attempt, oldest first' }),
});

export const DeliveryPage = Type.Object({ data: Type.Array(DeliveryView), total: Type.Integer(), page: Type.Integer() });
