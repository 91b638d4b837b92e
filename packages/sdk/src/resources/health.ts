import type { RequestCore, RequestOptions } from '../request.js';

/** Provider carrying a channel; `capture` means messages are stored, not sent. */
export interface ChannelProviders {
  email: string;
  telegram: string;
  sms: string;
}

/** `GET /health` when the gateway is up. */
export interface Health {
  status: string;
  /** ISO 8601 timestamp. */
  timestamp: string;
  /** Storage engine (`pglite` or `postgres`). */
  database: string;
  /** Roles this process runs: `all`, `api` or `worker`. */
  role: string;
  channels: ChannelProviders;
}

/** Gateway liveness; needs no API key. */
export class HealthResource {
  constructor(private readonly core: RequestCore) {}

  /**
   * Liveness and database reachability. A gateway whose database is down answers 503, thrown as
   * a HeraldApiError with code `SERVICE_UNAVAILABLE`.
   * @example const { status, channels } = await herald.health.check();
   */
  check(options?: RequestOptions): Promise<Health> {
    return this.core.request({ method: 'GET', path: '/health', anonymous: true, answer: { status: 'string', channels: 'object' } }, options);
  }
}
