import { PAGE, type AnswerShape } from '../answer-shape.js';
import { eachDataItem } from '../paginate.js';
import type { RequestCore, RequestOptions } from '../request.js';
import type { Tier } from './account.js';

/** A protocol as the admin API shows it. */
export interface AdminProtocol {
  id: string;
  name: string;
  tier: Tier;
  tierName: string;
  overageEnabled: boolean;
  /** ISO 8601 timestamps. */
  subscriptionExpiresAt: string;
  createdAt: string;
  updatedAt: string;
}

/** A new protocol with its two keys, which are shown here and never again. */
export interface CreatedProtocol extends AdminProtocol {
  /** `hrld_live_…`: production traffic. */
  apiKey: string;
  /** `hrld_test_…`: sandbox traffic, delivered to the capture provider only. */
  sandboxApiKey: string;
}

export interface CreateProtocolParams {
  /** 1 to 200 characters. */
  name: string;
  tier: Tier;
  /** Keep sending past the monthly quota instead of answering 402; default false. */
  overageEnabled?: boolean;
  /** ISO 8601; default one year from now. */
  subscriptionExpiresAt?: string;
}

/** At least one field. */
export type UpdateProtocolParams = Partial<CreateProtocolParams>;

export interface ListProtocolsParams {
  /** From 1; default 1. */
  page?: number;
  /** 1 to 100; default 20. */
  limit?: number;
}

export interface ProtocolList {
  data: AdminProtocol[];
  total: number;
  page: number;
}

const protocolPath = (id: string) => `/v1/admin/protocols/${encodeURIComponent(id)}`;
const PROTOCOL: AnswerShape = { id: 'string', name: 'string', tier: 'number' };

/** Operator management of protocols (accounts); part of HeraldAdmin. */
export class AdminProtocols {
  constructor(private readonly core: RequestCore) {}

  /**
   * Creates a protocol with one live and one sandbox API key. Store the keys at once: they are
   * not shown again.
   * @example const { id, apiKey } = await admin.protocols.create({ name: 'Acme', tier: 1 });
   */
  create(params: CreateProtocolParams, options?: RequestOptions): Promise<CreatedProtocol> {
    return this.core.request({ method: 'POST', path: '/v1/admin/protocols', body: params, answer: { id: 'string', apiKey: 'string', sandboxApiKey: 'string' } }, options);
  }

  /**
   * Lists protocols, newest first.
   * @example const { data, total } = await admin.protocols.list({ limit: 50 });
   */
  list(params: ListProtocolsParams = {}, options?: RequestOptions): Promise<ProtocolList> {
    return this.core.request({ method: 'GET', path: '/v1/admin/protocols', query: { page: params.page, limit: params.limit }, answer: PAGE }, options);
  }

  /**
   * Every protocol, newest first, a page (`limit`, default 100) fetched at a time as the loop reads.
   * @example for await (const protocol of admin.protocols.listAll()) console.log(protocol.id, protocol.tier);
   */
  listAll(params: Omit<ListProtocolsParams, 'page'> = {}, options?: RequestOptions): AsyncGenerator<AdminProtocol, void, undefined> {
    return eachDataItem((page, limit) => this.list({ page, limit }, options), (protocol) => protocol.id, params.limit);
  }

  /**
   * One protocol; a missing id throws HeraldApiError 404 `PROTOCOL_NOT_FOUND`.
   * @example const protocol = await admin.protocols.get('proto_01J…');
   */
  get(id: string, options?: RequestOptions): Promise<AdminProtocol> {
    return this.core.request({ method: 'GET', path: protocolPath(id), answer: PROTOCOL }, options);
  }

  /**
   * Changes name, tier, overage or subscription expiry; other fields stay as they are.
   * @example await admin.protocols.update('proto_01J…', { tier: 2, overageEnabled: true });
   */
  update(id: string, params: UpdateProtocolParams, options?: RequestOptions): Promise<AdminProtocol> {
    return this.core.request({ method: 'PATCH', path: protocolPath(id), body: params, answer: PROTOCOL }, options);
  }
}
