/**
 * A token bucket that queues instead of refusing: `take()` resolves once a token is free. Holds
 * `perSecond` tokens (the allowed burst) and refills continuously. Tokens may go negative: each
 * caller reserves the next free slot, so waiters leave in arrival order, one every 1/perSecond s.
 */
export class TokenBucket {
  private tokens: number;
  private updatedAt: number;

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = () => performance.now(),
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  ) {
    if (!(perSecond > 0)) throw new RangeError('perSecond must be positive');
    this.tokens = perSecond;
    this.updatedAt = now();
  }

  /** Takes a token and answers how long (ms) the caller must wait before using it. */
  reserve(): number {
    const now = this.now();
    this.tokens = Math.min(this.perSecond, this.tokens + ((now - this.updatedAt) / 1000) * this.perSecond);
    this.updatedAt = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.perSecond) * 1000;
  }

  async take(): Promise<void> {
    const wait = this.reserve();
    if (wait > 0) await this.sleep(wait);
  }
}
