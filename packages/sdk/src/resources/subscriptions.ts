import type { AnswerShape } from '../answer-shape.js';
import type { RequestCore, RequestOptions } from '../request.js';
import type { Channel } from './notifications.js';

/** A wallet's subscription to the protocol. */
export interface Subscription {
  walletAddress: string;
  subscribed: boolean;
  channels: Channel[];
  /** ISO 8601; null when the wallet never subscribed. */
  subscribedAt: string | null;
  unsubscribedAt: string | null;
}

export interface SubscribeParams {
  walletAddress: string;
  /** One to three distinct channels. */
  channels: Channel[];
}

const subscriptionPath = (wallet: string) => `/v1/subscriptions/${encodeURIComponent(wallet)}`;
const SUBSCRIPTION: AnswerShape = { walletAddress: 'string', subscribed: 'boolean', channels: 'array' };

/** Which registered wallets follow the protocol, and on which channels. */
export class Subscriptions {
  constructor(private readonly core: RequestCore) {}

  /**
   * Subscribes a registered wallet (or changes its channels); an unregistered one throws 404
   * `WALLET_NOT_REGISTERED`.
   * @example await herald.subscriptions.subscribe({ walletAddress: wallet, channels: ['email', 'telegram'] });
   */
  subscribe(params: SubscribeParams, options?: RequestOptions): Promise<Subscription> {
    return this.core.request({ method: 'POST', path: '/v1/subscriptions', body: params, answer: SUBSCRIPTION }, options);
  }

  /**
   * A wallet's subscription; `subscribed: false` when it has none.
   * @example const { subscribed, channels } = await herald.subscriptions.get(wallet);
   */
  get(wallet: string, options?: RequestOptions): Promise<Subscription> {
    return this.core.request({ method: 'GET', path: subscriptionPath(wallet), answer: SUBSCRIPTION }, options);
  }

  /**
   * Unsubscribes: later sends to the wallet report `opted_out` until it subscribes again.
   * @example await herald.subscriptions.unsubscribe(wallet);
   */
  unsubscribe(wallet: string, options?: RequestOptions): Promise<Subscription> {
    return this.core.request({ method: 'DELETE', path: subscriptionPath(wallet), answer: SUBSCRIPTION }, options);
  }
}
