import type { Database } from '../db/connection.js';
import { CaptureProvider } from './capture.js';
import type { Channel, ChannelProvider } from './provider.js';

/**
 * Which provider carries each channel. Sandbox traffic always goes to capture; production traffic
 * goes to the configured provider, or to capture when the channel has none (the embedded default).
 */
export class ChannelRegistry {
  readonly capture: CaptureProvider;
  private readonly live: Partial<Record<Channel, ChannelProvider>>;

  constructor(db: Database, live: Partial<Record<Channel, ChannelProvider>> = {}) {
    this.capture = new CaptureProvider(db);
    this.live = live;
  }

  providerFor(channel: Channel, environment: 'production' | 'sandbox'): ChannelProvider {
    if (environment === 'sandbox') return this.capture;
    return this.live[channel] ?? this.capture;
  }

  /** Provider name per channel for production traffic, as /health reports it. */
  describe(): Record<Channel, string> {
    return {
      email: this.live.email?.name ?? 'capture',
      telegram: this.live.telegram?.name ?? 'capture',
      sms: this.live.sms?.name ?? 'capture',
    };
  }

  async close(): Promise<void> {
    await Promise.all(Object.values(this.live).map((provider) => provider?.close?.()));
  }
}
