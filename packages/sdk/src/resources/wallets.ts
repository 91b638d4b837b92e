import type { RequestCore, RequestOptions } from '../request.js';
import type { Channel } from './notifications.js';

/** What a protocol may know of a wallet: never the contact values. */
export interface WalletStatus {
  registered: boolean;
  /** Verified channels. */
  channels: Channel[];
}

/** Wallets as the protocol sees them. */
export class Wallets {
  constructor(private readonly core: RequestCore) {}

  /**
   * Whether a wallet is registered with Herald, and on which channels it can be reached.
   * @example const { registered, channels } = await herald.wallets.status('7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV');
   */
  status(wallet: string, options?: RequestOptions): Promise<WalletStatus> {
    return this.core.request({ method: 'GET', path: `/v1/wallets/${encodeURIComponent(wallet)}/status`, answer: { registered: 'boolean', channels: 'array' } }, options);
  }
}
