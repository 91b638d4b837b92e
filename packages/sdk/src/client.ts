import { RequestCore, type FetchLike } from './request.js';
import { Account } from './resources/account.js';
import { AdminKeys } from './resources/admin-keys.js';
import { AdminProtocols } from './resources/admin-protocols.js';
import { HealthResource } from './resources/health.js';

export { HeraldApiError, HeraldError, HeraldNetworkError, type NetworkErrorKind } from './errors.js';
export { DEFAULT_BASE_URL, type FetchLike, type RequestOptions } from './request.js';
export { SDK_VERSION } from './version.js';
export type { ListRequestsParams, Protocol, RequestLogEntry, RequestLogPage, Tier, Usage } from './resources/account.js';
export type { ChannelProviders, Health } from './resources/health.js';
export type {
  AdminProtocol,
  CreatedProtocol,
  CreateProtocolParams,
  ListProtocolsParams,
  ProtocolList,
  UpdateProtocolParams,
} from './resources/admin-protocols.js';
export type { ApiKey, ApiKeyList, CreatedApiKey, KeyEnvironment } from './resources/admin-keys.js';

/** Settings shared by Herald and HeraldAdmin. */
export interface ClientOptions {
  /** Gateway address; default `http://localhost:3000`. */
  baseUrl?: string;
  /** Limit per attempt in milliseconds; default 30 000. */
  timeoutMs?: number;
  /** Retries after the first attempt on network errors, 5xx and 429; default 2, 0 disables. */
  maxRetries?: number;
  /** A `fetch` to use instead of the global one. */
  fetch?: FetchLike;
  /** Replaces the default User-Agent, e.g. to name your integration. */
  userAgent?: string;
}

export interface HeraldOptions extends ClientOptions {
  /**
   * `hrld_live_…` or `hrld_test_…`. Only `health` works without one: every /v1 call answers
   * 401 `INVALID_API_KEY`.
   */
  apiKey?: string;
}

export interface HeraldAdminOptions extends ClientOptions {
  /** The gateway's HERALD_ADMIN_TOKEN. */
  adminToken: string;
}

/**
 * The Herald API client for one protocol.
 *
 * @example
 * const herald = new Herald({ apiKey: process.env.HERALD_API_KEY, baseUrl: 'https://herald.example.com' });
 * const usage = await herald.account.getUsage();
 */
export class Herald {
  /** Protocol info, quota usage and the request log. */
  readonly account: Account;
  /** Gateway liveness and channel providers. */
  readonly health: HealthResource;

  constructor(options: HeraldOptions = {}) {
    const core = new RequestCore({ ...options, token: options.apiKey });
    this.account = new Account(core);
    this.health = new HealthResource(core);
  }
}

/**
 * The operator's client for the admin API, authenticated with the gateway's admin token. Kept
 * apart from Herald so an application holding an API key never holds admin powers by accident.
 *
 * @example
 * const admin = new HeraldAdmin({ adminToken: process.env.HERALD_ADMIN_TOKEN! });
 * const { id, apiKey, sandboxApiKey } = await admin.protocols.create({ name: 'Acme', tier: 1 });
 */
export class HeraldAdmin {
  /** Protocols (accounts): create, list, read, change. */
  readonly protocols: AdminProtocols;
  /** API keys of a protocol: list, issue, revoke. */
  readonly keys: AdminKeys;

  constructor(options: HeraldAdminOptions) {
    const core = new RequestCore({ ...options, token: options.adminToken });
    this.protocols = new AdminProtocols(core);
    this.keys = new AdminKeys(core);
  }
}

// The package's public surface: the entry point also offers the webhook signature helpers.
export { SIGNATURE_HEADER, signWebhookPayload, verifyWebhookSignature, type VerifyOptions } from './webhooks.js';
