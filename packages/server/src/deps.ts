import type { Logger } from 'pino';
import type { Authenticator } from './auth/authenticator.js';
import type { ChannelRegistry } from './channels/registry.js';
import type { Config } from './config.js';
import type { SecretBox } from './crypto/secret-box.js';
import type { Database } from './db/connection.js';
import type { RateLimiter } from './limits/rate-limiter.js';
import type { Wakeup } from './jobs/wakeup.js';
import type { DeliveryEstimator } from './notifications/delivery-estimate.js';
import type { RequestLog } from './request-log/request-log.js';

/** Everything a route or a background loop may use, passed explicitly. */
export interface Deps {
  config: Config;
  db: Database;
  log: Logger;
  secrets: SecretBox;
  authenticator: Authenticator;
  limiter: RateLimiter;
  requestLog: RequestLog;
  channels: ChannelRegistry;
  wakeup: Wakeup;
  estimator: DeliveryEstimator;
  now: () => Date;
}
