/** What each tier allows. The contract fixes rps and monthly sends; the rest is Herald's choice. */
export interface Tier {
  tier: 0 | 1 | 2 | 3;
  name: 'Developer' | 'Growth' | 'Scale' | 'Enterprise';
  requestsPerSecond: number;
  monthlySends: number;
  webhookEndpoints: number;
  /** Largest notification `body` accepted, in bytes of UTF-8. */
  maxBodyBytes: number;
}

export const TIERS: readonly Tier[] = [
  { tier: 0, name: 'Developer', requestsPerSecond: 2, monthlySends: 1_000, webhookEndpoints: 1, maxBodyBytes: 10 * 1024 },
  { tier: 1, name: 'Growth', requestsPerSecond: 20, monthlySends: 50_000, webhookEndpoints: 5, maxBodyBytes: 50 * 1024 },
  { tier: 2, name: 'Scale', requestsPerSecond: 100, monthlySends: 250_000, webhookEndpoints: 20, maxBodyBytes: 100 * 1024 },
  { tier: 3, name: 'Enterprise', requestsPerSecond: 500, monthlySends: 1_000_000, webhookEndpoints: 100, maxBodyBytes: 256 * 1024 },
];

export function tierOf(tier: number): Tier {
  const found = TIERS[tier];
  if (!found) throw new RangeError(`unknown tier ${tier}`);
  return found;
}
