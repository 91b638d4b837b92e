import { createCall, type CreateOptions, type RequestCore, type RequestOptions } from '../request.js';
import type { Category, Environment, NotificationStatus } from './notifications.js';

export interface BroadcastParams {
  subject: string;
  /** Markdown. */
  body: string;
  category: Category;
  /** Request an on-chain receipt for every message. */
  receipt?: boolean;
  templateId?: string;
  /** The same values for every subscriber. */
  templateVariables?: Record<string, unknown>;
}

export interface BroadcastAccepted {
  /** `bcast_…` */
  broadcast_id: string;
  /** Subscribers with a deliverable channel: one notification queued for each. */
  queued_count: number;
  /** Registered wallets with an active subscription. */
  total_subscribers: number;
  estimated_delivery_s: number;
}

/** `GET /v1/broadcasts/:id`: the broadcast and its notifications' live counts. */
export interface Broadcast {
  broadcast_id: string;
  subject: string;
  category: Category;
  environment: Environment;
  write_receipt: boolean;
  template_id: string | null;
  template_version: number | null;
  created_at: string;
  total_subscribers: number;
  queued_count: number;
  counts: Record<NotificationStatus, number>;
}

/** One message to every active subscriber; Growth tier and above. */
export class Broadcasts {
  constructor(private readonly core: RequestCore) {}

  /**
   * Queues the message for every active subscriber on one of its channels. With
   * `options.idempotencyKey` a repeat (a retry, by the SDK or by you) gets the first answer and
   * sends nothing more.
   * @example const { broadcast_id, queued_count } = await herald.broadcasts.send({ subject: 'Upgrade', body: 'Tonight.', category: 'governance' }, { idempotencyKey: 'upgrade-2026-06' });
   */
  async send(params: BroadcastParams, options?: CreateOptions): Promise<BroadcastAccepted> {
    const { call, options: requestOptions } = createCall('/v1/broadcast', params, { broadcast_id: 'string', queued_count: 'number', total_subscribers: 'number' }, options);
    return this.core.request(call, requestOptions);
  }

  /**
   * A broadcast with its notifications counted by status; unknown ids throw 404 `BROADCAST_NOT_FOUND`.
   * @example const { counts } = await herald.broadcasts.get('bcast_01J…');
   */
  get(id: string, options?: RequestOptions): Promise<Broadcast> {
    return this.core.request({ method: 'GET', path: `/v1/broadcasts/${encodeURIComponent(id)}`, answer: { broadcast_id: 'string', counts: 'object' } }, options);
  }
}
