import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { ApiError } from '../http/errors.js';
import { refuseBodyField } from '../http/refuse-body-field.js';
import { errorResponses, pageQuery, StringEnum } from '../http/schemas.js';
import { WalletSchema } from '../wallet.js';
import { findNotification, listAttempts, listNotifications } from './notification-reads.js';
import { BulkBody, BulkResult, NotificationListItem, NotificationRecord, NotifyBody, SubmissionResult } from './schemas.js';
import { submitNotifications } from './submit-notifications.js';

const iso = (date: Date | null) => date?.toISOString() ?? null;
const tags = ['notifications'];

/**
 * Sends take their keys in the body. The Idempotency-Key header of broadcasts and schedules (and of
 * Stripe's API) would be ignored here, turning every retry into a second send: it is refused.
 */
function refuseKeyHeader(request: FastifyRequest, call: string, where: string): void {
  if (request.headers['idempotency-key'] !== undefined) {
    throw new ApiError('VALIDATION_ERROR', `Idempotency-Key: ${call} takes its key in the body field ${where}; this header would be ignored`);
  }
}

/** POST /v1/notify, POST /v1/notify/bulk, GET /v1/notifications/:id, GET /v1/notifications. */
export function notificationRoutes(app: FastifyInstance, deps: Deps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.post(
    '/v1/notify',
    {
      schema: {
        tags,
        summary: 'Queue one notification to a wallet',
        body: NotifyBody,
        response: { 202: SubmissionResult, ...errorResponses(400, 401, 402, 403, 404, 409, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      refuseKeyHeader(request, 'POST /v1/notify', 'idempotencyKey');
      const { environment, protocol } = request.auth!;
      const sampling = deps.estimator.fresh();
      if (sampling) await sampling;
      const [result] = await submitNotifications(deps, { protocol, environment }, [request.body], { mode: 'single' });
      return reply.code(202).send({ ...result, environment });
    },
  );

  api.post(
    '/v1/notify/bulk',
    {
      schema: {
        tags,
        summary: 'Queue 1 to 100 notifications in one all-or-nothing request',
        body: BulkBody,
        response: { 202: BulkResult, ...errorResponses(400, 401, 402, 403, 404, 409, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      refuseKeyHeader(request, 'POST /v1/notify/bulk', 'idempotencyKey of each notification');
      // In the handler, without a hook of its own on the hot path: a key beside the list would be ignored.
      refuseBodyField(request.body, 'idempotencyKey', 'a bulk request takes a key on each notification (notifications[i].idempotencyKey); this one would be ignored');
      const { environment, protocol } = request.auth!;
      const sampling = deps.estimator.fresh();
      if (sampling) await sampling;
      const results = await submitNotifications(deps, { protocol, environment }, request.body.notifications, { mode: 'bulk' });
      return reply.code(202).send({ results });
    },
  );

  api.get(
    '/v1/notifications/:id',
    {
      schema: {
        tags,
        summary: 'Status record of one notification',
        params: Type.Object({ id: Type.String({ minLength: 1 }) }),
        response: { 200: NotificationRecord, ...errorResponses(401, 404, 429) },
      },
    },
    async (request) => {
      const row = await findNotification(deps.db, request.auth!.protocol.id, request.params.id);
      if (!row) throw new ApiError('NOTIFICATION_NOT_FOUND', `Notification ${request.params.id} not found`);
      const attempts = await listAttempts(deps.db, row.id);
      return {
        notification_id: row.id,
        wallet: row.wallet,
        subject: row.subject,
        status: row.status,
        delivery_channel: row.fallback_channel ?? row.channel,
        delivered_at: iso(row.delivered_at),
        created_at: row.created_at.toISOString(),
        write_receipt: row.write_receipt,
        receipt_status: row.receipt_status,
        receipt_tx: row.receipt_tx,
        receipt_failure_reason: row.receipt_failure_reason,
        last_receipt_attempt_at: iso(row.last_receipt_attempt_at),
        category: row.category,
        priority: row.priority,
        environment: row.environment,
        preferred_channel: row.preferred_channel,
        fallback_channel: row.fallback_channel,
        template_id: row.template_id,
        template_version: row.template_version,
        broadcast_id: row.broadcast_id,
        schedule_id: row.schedule_id,
        error: row.last_error,
        receipt_requested_at: iso(row.receipt_requested_at),
        attempts: attempts.map((a) => ({ ...a, created_at: a.created_at.toISOString() })),
      };
    },
  );

  api.get(
    '/v1/notifications',
    {
      schema: {
        tags,
        summary: "The protocol's notifications, newest first",
        querystring: Type.Object({
          ...pageQuery(20),
          status: Type.Optional(StringEnum(['queued', 'sending', 'delivered', 'bounced', 'failed', 'opted_out'] as const)),
          wallet: Type.Optional(WalletSchema),
        }),
        response: {
          200: Type.Object({ data: Type.Array(NotificationListItem), total: Type.Integer(), page: Type.Integer() }),
          ...errorResponses(400, 401, 429),
        },
      },
    },
    async (request) => {
      const { page, limit, status, wallet } = request.query;
      const { rows, total } = await listNotifications(deps.db, { protocolId: request.auth!.protocol.id, page, limit, status, wallet });
      return {
        data: rows.map((row) => ({
          notification_id: row.id,
          wallet: row.wallet,
          subject: row.subject,
          status: row.status,
          delivery_channel: row.fallback_channel ?? row.channel,
          receipt_status: row.receipt_status,
          receipt_tx: row.receipt_tx,
          created_at: row.created_at.toISOString(),
        })),
        total,
        page,
      };
    },
  );
}
