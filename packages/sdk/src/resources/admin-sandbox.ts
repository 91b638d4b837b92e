import { PAGE } from '../answer-shape.js';
import { eachDataItem } from '../paginate.js';
import type { RequestCore, RequestOptions } from '../request.js';
import type { CapturedMessage, ListCapturedMessagesParams } from './sandbox.js';

/** A captured message of any protocol: `herald` for the gateway's own (verification codes, bot replies). */
export interface AdminCapturedMessage extends CapturedMessage {
  protocolId: string;
}

export interface AdminCapturedMessageList {
  data: AdminCapturedMessage[];
  total: number;
  page: number;
}

export interface ListAdminCapturedMessagesParams extends ListCapturedMessagesParams {
  /** One protocol's messages; `herald` for the gateway's own. */
  protocolId?: string;
}

/** Everything the capture provider kept, for the operator; part of HeraldAdmin. */
export class AdminSandbox {
  constructor(private readonly core: RequestCore) {}

  /**
   * Every captured message, newest first: each protocol's, and the gateway's own verification
   * codes (the only way to read one when email and SMS have no provider).
   * @example const { data: [code] } = await admin.sandbox.messages({ protocolId: 'herald', wallet });
   */
  messages(params: ListAdminCapturedMessagesParams = {}, options?: RequestOptions): Promise<AdminCapturedMessageList> {
    const { page, limit, protocolId, wallet, channel } = params;
    return this.core.request({ method: 'GET', path: '/v1/admin/sandbox/messages', query: { page, limit, protocolId, wallet, channel }, answer: PAGE }, options);
  }

  /**
   * Every captured message the filters match, newest first, a page (`limit`, default 100) fetched
   * at a time as the loop reads; messages captured while it runs are left out.
   * @example for await (const message of admin.sandbox.listAllMessages({ protocolId: 'herald' })) console.log(message.text);
   */
  listAllMessages(params: Omit<ListAdminCapturedMessagesParams, 'page'> = {}, options?: RequestOptions): AsyncGenerator<AdminCapturedMessage, void, undefined> {
    return eachDataItem((page, limit) => this.messages({ ...params, page, limit }, options), (message) => message.id, params.limit);
  }
}
