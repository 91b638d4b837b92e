import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../http/schemas.js';
import { WalletSchema } from '../wallet.js';

export const CATEGORIES = ['defi', 'governance', 'system', 'marketing', 'security'] as const;
export const CategorySchema = StringEnum(CATEGORIES);
export const ChannelSchema = StringEnum(['email', 'telegram', 'sms'] as const);
export const PrioritySchema = StringEnum(['normal', 'important', 'critical'] as const);

export const NotifyBody = Type.Object({
  wallet: WalletSchema,
  subject: Type.String({ minLength: 1, maxLength: 998, description: 'Advised to stay within about 100 characters' }),
  body: Type.String({ minLength: 1, description: 'Markdown; the size limit depends on the tier' }),
  category: CategorySchema,
  priority: Type.Optional(PrioritySchema),
  preferredChannel: Type.Optional(ChannelSchema),
  receipt: Type.Optional(Type.Boolean()),
  templateId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  templateVariables: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  idempotencyKey: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
});
export type NotifyInput = Static<typeof NotifyBody>;

export const BulkBody = Type.Object({
  notifications: Type.Array(NotifyBody, { minItems: 1, maxItems: 100 }),
});

const SubmissionFields = {
  notificationId: Type.String(),
  status: StringEnum(['queued', 'opted_out', 'duplicate', 'failed'] as const),
  recipientRegistered: Type.Boolean(),
  estimatedDeliveryMs: Type.Union([Type.Integer(), Type.Null()]),
  deliveryChannel: Type.Union([ChannelSchema, Type.Null()]),
};
export const SubmissionResult = Type.Object({ ...SubmissionFields, environment: Type.String() });
export const BulkResult = Type.Object({ results: Type.Array(Type.Object(SubmissionFields)) });

const NullableDate = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);
const NullableString = Type.Union([Type.String(), Type.Null()]);

export const NotificationRecord = Type.Object({
  notification_id: Type.String(),
  wallet: Type.String(),
  subject: Type.String(),
  status: Type.String({ description: 'queued | sending | delivered | bounced | failed | opted_out' }),
  delivery_channel: NullableString,
  delivered_at: NullableDate,
  created_at: Type.String({ format: 'date-time' }),
  write_receipt: Type.Boolean(),
  receipt_status: Type.String({ description: 'disabled | pending | confirmed | failed' }),
  receipt_tx: NullableString,
  receipt_failure_reason: NullableString,
  last_receipt_attempt_at: NullableDate,
  category: Type.String(),
  priority: Type.String(),
  environment: Type.String(),
  preferred_channel: NullableString,
  fallback_channel: NullableString,
  template_id: NullableString,
  template_version: Type.Union([Type.Integer(), Type.Null()]),
  broadcast_id: NullableString,
  schedule_id: NullableString,
  error: NullableString,
  receipt_requested_at: NullableDate,
  attempts: Type.Array(
    Type.Object({
      attempt: Type.Integer(),
      channel: Type.String(),
      provider: Type.String(),
      outcome: Type.String(),
      error: NullableString,
      provider_response: NullableString,
      duration_ms: Type.Integer(),
      created_at: Type.String({ format: 'date-time' }),
    }),
  ),
});

export const NotificationListItem = Type.Object({
  notification_id: Type.String(),
  wallet: Type.String(),
  subject: Type.String(),
  status: Type.String(),
  delivery_channel: NullableString,
  receipt_status: Type.String(),
  receipt_tx: NullableString,
  created_at: Type.String({ format: 'date-time' }),
});
