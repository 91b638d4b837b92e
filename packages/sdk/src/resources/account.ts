import type { RequestCore, RequestOptions } from '../request.js';

/** Tier number: 0 Developer, 1 Growth, 2 Scale, 3 Enterprise. */
export type Tier = 0 | 1 | 2 | 3;

/** `GET /v1/protocols/me`: the protocol that owns the API key (field names as the API sends them). */
export interface Protocol {
  id: string;
  name: string;
  tier: Tier;
  tier_name: string;
  /** Sends counted against this calendar month's (UTC) quota. */
  sends_this_period: number;
  /** ISO 8601 UTC timestamp. */
  subscription_expires_at: string;
}

/** `GET /v1/usage`: this month's quota. */
export interface Usage {
  tier: Tier;
  usage: number;
  remaining: number;
  overageEnabled: boolean;
  /** Start of the next calendar month (UTC), ISO 8601. */
  resetsAt: string;
}

/** Filters and page of `GET /v1/requests`. */
export interface ListRequestsParams {
  /** From 1; default 1. */
  page?: number;
  /** 1 to 100; default 50. */
  limit?: number;
  /** Only requests answered with this HTTP status. */
  statusCode?: number;
  /** Only requests whose path contains this text. */
  endpoint?: string;
}

/** One entry of the request log. */
export interface RequestLogEntry {
  method: string;
  endpoint: string;
  statusCode: number;
  latencyMs: number;
  /** ISO 8601 timestamp. */
  timestamp: string;
}

export interface RequestLogPage {
  items: RequestLogEntry[];
  total: number;
  page: number;
}

/** The caller's own account: protocol, quota and request log. */
export class Account {
  constructor(private readonly core: RequestCore) {}

  /**
   * The protocol the API key belongs to, with this month's send count.
   * @example const { name, tier_name } = await herald.account.getProtocol();
   */
  getProtocol(options?: RequestOptions): Promise<Protocol> {
    return this.core.request({ method: 'GET', path: '/v1/protocols/me', answer: { id: 'string', name: 'string', tier: 'number' } }, options);
  }

  /**
   * Sends used and left this calendar month (UTC), and when the count resets.
   * @example const { remaining } = await herald.account.getUsage();
   */
  getUsage(options?: RequestOptions): Promise<Usage> {
    return this.core.request({ method: 'GET', path: '/v1/usage', answer: { usage: 'number', remaining: 'number', resetsAt: 'string' } }, options);
  }

  /**
   * The protocol's API request log, newest first.
   * @example const { items } = await herald.account.listRequests({ statusCode: 429, limit: 10 });
   */
  listRequests(params: ListRequestsParams = {}, options?: RequestOptions): Promise<RequestLogPage> {
    const { page, limit, statusCode, endpoint } = params;
    return this.core.request({ method: 'GET', path: '/v1/requests', query: { page, limit, statusCode, endpoint }, answer: { items: 'objects', total: 'number' } }, options);
  }
}
