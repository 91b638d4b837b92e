/**
 * A send rate that queues instead of refusing, exact over any one second: at most `perSecond`
 * sends start within any 1000 ms. `take()` resolves when the caller's slot comes. Each caller
 * reserves the next free slot, so waiters leave in arrival order; after a quiet spell a burst of
 * `perSecond` goes at once, and the next send waits until the first of them is a second old (a
 * token bucket, which refills while the burst goes, would let nearly twice as many through in
 * that second).
 */
export class SendWindow {
  /** When each of the last `perSecond` sends starts, oldest at `next`. */
  private readonly starts: number[];
  private next = 0;

  constructor(
    perSecond: number,
    private readonly now: () => number = () => performance.now(),
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  ) {
    if (!Number.isInteger(perSecond) || perSecond < 1) throw new RangeError('perSecond must be a positive integer');
    this.starts = new Array<number>(perSecond).fill(-Infinity);
  }

  /** Reserves the next slot and answers how long (ms) the caller must wait for it. */
  reserve(): number {
    const now = this.now();
    // The send `perSecond` places back must be a second old when this one starts.
    const start = Math.max(now, this.starts[this.next] + 1000);
    this.starts[this.next] = start;
    this.next = (this.next + 1) % this.starts.length;
    return start - now;
  }

  async take(): Promise<void> {
    const wait = this.reserve();
    if (wait > 0) await this.sleep(wait);
  }
}
