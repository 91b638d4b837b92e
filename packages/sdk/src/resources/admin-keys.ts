import type { RequestCore, RequestOptions } from '../request.js';

/** `production` keys start `hrld_live_`, `sandbox` keys `hrld_test_`. */
export type KeyEnvironment = 'production' | 'sandbox';

/** An API key as listed: only its display prefix, never the key itself. */
export interface ApiKey {
  id: string;
  prefix: string;
  environment: KeyEnvironment;
  /** ISO 8601 timestamps. */
  createdAt: string;
  revokedAt: string | null;
}

/** A newly issued key; `apiKey` is shown here and never again. */
export interface CreatedApiKey extends ApiKey {
  apiKey: string;
}

export interface ApiKeyList {
  data: ApiKey[];
}

const keysPath = (protocolId: string) => `/v1/admin/protocols/${encodeURIComponent(protocolId)}/keys`;

/** Operator management of a protocol's API keys; part of HeraldAdmin. */
export class AdminKeys {
  constructor(private readonly core: RequestCore) {}

  /**
   * A protocol's keys, revoked ones included.
   * @example const { data } = await admin.keys.list('proto_01J…');
   */
  list(protocolId: string, options?: RequestOptions): Promise<ApiKeyList> {
    return this.core.request({ method: 'GET', path: keysPath(protocolId), answer: { data: 'objects' } }, options);
  }

  /**
   * Issues another key for a protocol, e.g. to rotate: issue, deploy, then revoke the old one.
   * @example const { apiKey } = await admin.keys.create('proto_01J…', { environment: 'production' });
   */
  create(protocolId: string, params: { environment: KeyEnvironment }, options?: RequestOptions): Promise<CreatedApiKey> {
    return this.core.request({ method: 'POST', path: keysPath(protocolId), body: params, answer: { id: 'string', apiKey: 'string' } }, options);
  }

  /**
   * Revokes a key: it answers 401 from then on (other gateway processes within their auth cache TTL).
   * @example await admin.keys.revoke('proto_01J…', 'key_01J…');
   */
  revoke(protocolId: string, keyId: string, options?: RequestOptions): Promise<ApiKey> {
    return this.core.request({ method: 'DELETE', path: `${keysPath(protocolId)}/${encodeURIComponent(keyId)}`, answer: { id: 'string' } }, options);
  }
}
