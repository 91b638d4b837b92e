import type { Deps } from '../deps.js';
import type { EventType } from '../events/record-event.js';
import { ApiError } from '../http/errors.js';
import { findDelivery, listAttempts, listDeliveries, requeueDelivery, type AttemptRow, type DeliveryRow } from './delivery-log-store.js';
import { requireEndpoint } from './endpoint-service.js';
import { eventEnvelope, type EventEnvelope } from './event-payloads.js';

export interface AttemptView {
  statusCode: number | null;
  latencyMs: number;
  responseBody: string | null;
  error: string | null;
  createdAt: string;
}

export interface DeliveryView {
  id: string;
  eventId: string;
  eventType: EventType;
  status: 'pending' | 'succeeded' | 'failed';
  nextAttemptAt: string | null;
  createdAt: string;
  completedAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  event: EventEnvelope;
  attempts: AttemptView[];
}

const iso = (date: Date | null) => date?.toISOString() ?? null;

function deliveryView(row: DeliveryRow, attempts: AttemptRow[]): DeliveryView {
  return {
    id: row.id,
    eventId: row.event_id,
    eventType: row.event_type as EventType,
    status: row.status,
    nextAttemptAt: row.status === 'pending' ? iso(row.next_attempt_at) : null,
    createdAt: row.created_at.toISOString(),
    completedAt: iso(row.completed_at),
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    event: eventEnvelope({ id: row.event_id, type: row.event_type, data: row.event_data, created_at: row.event_created_at }),
    attempts: attempts
      .filter((attempt) => attempt.delivery_id === row.id)
      .map((attempt) => ({
        statusCode: attempt.status_code,
        latencyMs: attempt.latency_ms,
        responseBody: attempt.response_body,
        error: attempt.error,
        createdAt: attempt.created_at.toISOString(),
      })),
  };
}

/** One page of the endpoint's deliveries, newest first, each with all its attempts. */
export async function deliveryLogPage(
  deps: Deps,
  protocolId: string,
  endpointId: string,
  { page, limit }: { page: number; limit: number },
): Promise<{ data: DeliveryView[]; total: number; page: number }> {
  await requireEndpoint(deps, protocolId, endpointId);
  const { rows, total } = await listDeliveries(deps.db, endpointId, limit, (page - 1) * limit);
  const attempts = await listAttempts(deps.db, rows.map((row) => row.id));
  return { data: rows.map((row) => deliveryView(row, attempts)), total, page };
}

/**
 * Queues a delivery again, due now, with a fresh retry schedule (its earlier attempts stay in the
 * log). An inactive endpoint must be turned on first, since nothing is sent to it.
 */
export async function replayDelivery(deps: Deps, protocolId: string, endpointId: string, deliveryId: string): Promise<DeliveryView> {
  const endpoint = await requireEndpoint(deps, protocolId, endpointId);
  const notFound = () => new ApiError('WEBHOOK_DELIVERY_NOT_FOUND', `Delivery ${deliveryId} of webhook ${endpointId} not found`);
  if (!(await findDelivery(deps.db, endpointId, deliveryId))) throw notFound();
  if (!endpoint.is_active) {
    throw new ApiError('CONFLICT', `Webhook ${endpointId} is inactive; set isActive to true before retrying its deliveries`);
  }
  if (!(await requeueDelivery(deps.db, endpointId, deliveryId, deps.now()))) throw notFound();
  deps.wakeup.notify('webhooks');
  const row = await findDelivery(deps.db, endpointId, deliveryId);
  if (!row) throw notFound();
  return deliveryView(row, await listAttempts(deps.db, [row.id]));
}
