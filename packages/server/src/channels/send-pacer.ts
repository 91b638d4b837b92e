/**
 * A send rate that queues instead of refusing: sends start at least 1/`perSecond` s apart, so at
 * most `perSecond` start within any second, spread evenly as Telegram asks of bulk senders
 * (bursts draw its 429s). Each caller reserves the next free start, so waiters leave in arrival
 * order. (A token bucket holding a second's worth lets nearly twice the rate through in the
 * second after a quiet spell: the burst, then what refills while it goes.)
 */
export class SendPacer {
  private readonly gapMs: number;
  private lastStart = -Infinity;

  constructor(
    perSecond: number,
    private readonly now: () => number = () => performance.now(),
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  ) {
    if (!(perSecond > 0) || !Number.isFinite(perSecond)) throw new RangeError('perSecond must be a positive number');
    this.gapMs = 1000 / perSecond;
  }

  /** Reserves the next start and answers when it is (on the `now` clock). */
  reserve(): number {
    this.lastStart = Math.max(this.now(), this.lastStart + this.gapMs);
    return this.lastStart;
  }

  async take(): Promise<void> {
    const start = this.reserve();
    // Timers fire in whole milliseconds, sometimes a little early: wait until the start has come.
    for (let wait = start - this.now(); wait > 0; wait = start - this.now()) await this.sleep(wait);
  }
}
