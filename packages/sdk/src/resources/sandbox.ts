import { PAGE } from '../answer-shape.js';
import { eachDataItem } from '../paginate.js';
import type { RequestCore, RequestOptions } from '../request.js';
import type { Channel, Environment } from './notifications.js';

/** A message the capture provider kept instead of sending it. */
export interface CapturedMessage {
  id: string;
  notificationId: string | null;
  environment: Environment;
  wallet: string;
  channel: Channel;
  /** Email only. */
  subject: string | null;
  /** Email only. */
  html: string | null;
  /** The plain text: the email's text part, the Telegram message or the SMS. */
  text: string;
  /** ISO 8601 timestamp. */
  createdAt: string;
}

export interface CapturedMessageList {
  data: CapturedMessage[];
  total: number;
  page: number;
}

export interface ListCapturedMessagesParams {
  /** From 1; default 1. */
  page?: number;
  /** 1 to 100; default 20. */
  limit?: number;
  wallet?: string;
  channel?: Channel;
}

/** What sandbox keys (and channels without a provider) delivered: stored, not sent. */
export class Sandbox {
  constructor(private readonly core: RequestCore) {}

  /**
   * Messages kept by the capture provider for this protocol, newest first.
   * @example const { data } = await herald.sandbox.messages({ wallet, channel: 'email', limit: 5 });
   */
  messages(params: ListCapturedMessagesParams = {}, options?: RequestOptions): Promise<CapturedMessageList> {
    const { page, limit, wallet, channel } = params;
    return this.core.request({ method: 'GET', path: '/v1/sandbox/messages', query: { page, limit, wallet, channel }, answer: PAGE }, options);
  }

  /**
   * Every captured message the filters match, newest first, a page (`limit`, default 100) fetched
   * at a time as the loop reads; messages captured while it runs are left out.
   * @example for await (const message of herald.sandbox.listAllMessages({ channel: 'sms' })) console.log(message.text);
   */
  listAllMessages(params: Omit<ListCapturedMessagesParams, 'page'> = {}, options?: RequestOptions): AsyncGenerator<CapturedMessage, void, undefined> {
    return eachDataItem((page, limit) => this.messages({ ...params, page, limit }, options), (message) => message.id, params.limit);
  }
}
