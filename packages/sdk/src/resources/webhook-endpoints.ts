import { PAGE, type AnswerShape } from '../answer-shape.js';
import { eachDataItem } from '../paginate.js';
import { createCall, type CreateOptions, type RequestCore, type RequestOptions } from '../request.js';

export type EventType = 'notification.delivered' | 'notification.bounced' | 'notification.failed' | 'receipt.confirmed' | 'quota.exceeded';

/** A webhook endpoint; the secret is never shown after creation. */
export interface Webhook {
  /** `wh_…` */
  id: string;
  url: string;
  events: EventType[];
  isActive: boolean;
}

/** The create answer: the only time the signing secret is shown. */
export interface CreatedWebhook extends Webhook {
  /** `whsec_…`: verify requests with verifyWebhookSignature. */
  secret: string;
}

/** One endpoint as `get` answers it (never its secret). */
export interface WebhookDetail extends Webhook {
  createdAt: string;
  updatedAt: string;
  /** Why the endpoint is inactive (`deactivated through the API`, or after failing for days); null while active. */
  disabledReason: string | null;
  /** Until when the secret a rotation replaced is still signed with; null when none is. */
  previousSecretExpiresAt: string | null;
}

/** The rotate-secret answer: the only time the new secret is shown. */
export interface RotatedWebhook extends Webhook {
  /** The new `whsec_…` secret. */
  secret: string;
  /** Until when the secret replaced is still signed with (beside the new one); null when it was dropped at once. */
  previousSecretExpiresAt: string | null;
}

export interface RotateSecretParams {
  /** How long the secret replaced stays valid, 0–604800 seconds; default 86400 (24 hours). */
  previousSecretExpiresInSeconds?: number;
}

export interface CreateWebhookParams {
  /** Absolute http(s) URL. */
  url: string;
  /** At least one, no repeats. */
  events: EventType[];
  /** Whether it receives events; true when not given (register it off, turn it on later). */
  isActive?: boolean;
}

/** At least one field; turning an endpoint on again clears its failure streak. */
export type UpdateWebhookParams = Partial<CreateWebhookParams>;

/** The JSON body Herald posts (the envelope). */
export interface WebhookEvent {
  id: string;
  type: EventType;
  /** Unix time in seconds. */
  created: number;
  data: Record<string, unknown>;
}

export interface WebhookDeliveryAttempt {
  /** Null when no answer came. */
  statusCode: number | null;
  latencyMs: number;
  /** The first 1 KB of the answer. */
  responseBody: string | null;
  error: string | null;
  createdAt: string;
}

/** One event's delivery to one endpoint, with every attempt. */
export interface WebhookDelivery {
  id: string;
  eventId: string;
  eventType: EventType;
  status: 'pending' | 'succeeded' | 'failed';
  /** ISO 8601 timestamps. */
  nextAttemptAt: string | null;
  createdAt: string;
  completedAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  event: WebhookEvent;
  /** Oldest first. */
  attempts: WebhookDeliveryAttempt[];
}

export interface WebhookDeliveryList {
  data: WebhookDelivery[];
  total: number;
  page: number;
}

const webhookPath = (id: string) => `/v1/webhooks/${encodeURIComponent(id)}`;
const WEBHOOK = { id: 'string', url: 'string', events: 'array' } as const;

/**
 * Webhook endpoints: where Herald posts signed delivery, receipt and quota events. Endpoints receive
 * both environments' events, so `create`, `update`, `delete` and `rotateSecret` need a live key (a
 * sandbox key gets 403 `FORBIDDEN`).
 */
export class Webhooks {
  constructor(private readonly core: RequestCore) {}

  /**
   * Registers an endpoint. Store `secret` at once: it is not shown again (except to a repeat of
   * the call with the same `options.idempotencyKey`, which registers nothing more; with a key the
   * call is retried like a GET).
   * @example const { id, secret } = await herald.webhooks.create({ url: 'https://example.com/hooks', events: ['notification.delivered'] }, { idempotencyKey: 'hooks-prod' });
   */
  async create(params: CreateWebhookParams, options?: CreateOptions): Promise<CreatedWebhook> {
    const { call, options: requestOptions } = createCall('/v1/webhooks', params, { ...WEBHOOK, secret: 'string' }, options);
    return this.core.request(call, requestOptions);
  }

  /**
   * The protocol's endpoints, oldest first (a bare array, as the API answers).
   * @example const hooks = await herald.webhooks.list();
   */
  list(options?: RequestOptions): Promise<Webhook[]> {
    return this.core.request({ method: 'GET', path: '/v1/webhooks', answer: 'objects' }, options);
  }

  /**
   * One endpoint, with its dates and why it is inactive; an unknown id throws 404 `WEBHOOK_NOT_FOUND`.
   * @example const { isActive, disabledReason } = await herald.webhooks.get(id);
   */
  get(id: string, options?: RequestOptions): Promise<WebhookDetail> {
    return this.core.request({ method: 'GET', path: webhookPath(id), answer: WEBHOOK }, options);
  }

  /**
   * Replaces the signing secret. Store `secret` at once: it is not shown again. Requests are
   * signed with the new and the old secret until `previousSecretExpiresAt` (24 hours by default),
   * so deploy the new one to the receiver within that time. With `options.idempotencyKey` a repeat
   * answers the first new secret instead of rotating again, and the call is retried like a GET.
   * @example const { secret } = await herald.webhooks.rotateSecret(id, { previousSecretExpiresInSeconds: 3600 }, { idempotencyKey: 'rotate-2026-06' });
   */
  async rotateSecret(id: string, params: RotateSecretParams = {}, options?: CreateOptions): Promise<RotatedWebhook> {
    const { call, options: requestOptions } = createCall(`${webhookPath(id)}/rotate-secret`, params, { ...WEBHOOK, secret: 'string' }, options);
    return this.core.request(call, requestOptions);
  }

  /**
   * Changes url, events or isActive.
   * @example await herald.webhooks.update(id, { isActive: false });
   */
  update(id: string, params: UpdateWebhookParams, options?: RequestOptions): Promise<Webhook> {
    return this.core.request({ method: 'PATCH', path: webhookPath(id), body: params, answer: WEBHOOK }, options);
  }

  /**
   * Deletes an endpoint and its delivery log (204, resolves with nothing).
   * @example await herald.webhooks.delete(id);
   */
  async delete(id: string, options?: RequestOptions): Promise<void> {
    await this.core.request({ method: 'DELETE', path: webhookPath(id), noContent: true }, options);
  }

  /**
   * Posts a signed synthetic `notification.delivered` now; `sent` is whether the endpoint answered 2xx.
   * @example const { sent } = await herald.webhooks.test(id);
   */
  test(id: string, options?: RequestOptions): Promise<{ sent: boolean }> {
    return this.core.request({ method: 'POST', path: `${webhookPath(id)}/test`, answer: { sent: 'boolean' } }, options);
  }

  /**
   * The endpoint's deliveries, newest first, each with every attempt.
   * @example const { data } = await herald.webhooks.deliveries(id, { limit: 10 });
   */
  deliveries(id: string, params: { page?: number; limit?: number } = {}, options?: RequestOptions): Promise<WebhookDeliveryList> {
    return this.core.request({ method: 'GET', path: `${webhookPath(id)}/deliveries`, query: { page: params.page, limit: params.limit }, answer: PAGE }, options);
  }

  /**
   * Every delivery of the endpoint, newest first, a page (`limit`, default 100) fetched at a time
   * as the loop reads; deliveries made while it runs are left out.
   * @example for await (const delivery of herald.webhooks.listAllDeliveries(id)) if (delivery.status === 'failed') await herald.webhooks.retryDelivery(id, delivery.id);
   */
  listAllDeliveries(id: string, params: { limit?: number } = {}, options?: RequestOptions): AsyncGenerator<WebhookDelivery, void, undefined> {
    return eachDataItem((page, limit) => this.deliveries(id, { page, limit }, options), (delivery) => delivery.id, params.limit);
  }

  /**
   * Queues a delivery again, due now, with a fresh retry schedule (accepted, not yet sent).
   * @example const delivery = await herald.webhooks.retryDelivery(id, deliveryId);
   */
  retryDelivery(id: string, deliveryId: string, options?: RequestOptions): Promise<WebhookDelivery> {
    return this.core.request({ method: 'POST', path: `${webhookPath(id)}/deliveries/${encodeURIComponent(deliveryId)}/retry`, answer: { id: 'string', attempts: 'objects' } }, options);
  }
}
