import type { Logger } from 'pino';

export interface LoopOptions {
  name: string;
  log: Logger;
  /** Longest sleep between passes when nothing wakes the loop. */
  idleMs: number;
  /** One pass: claim and process a batch; returns how many items it handled. */
  pass: () => Promise<number>;
}

/**
 * Runs `pass` until it finds nothing to do, then sleeps until `wake()` or `idleMs`. A failing
 * pass is logged and retried with backoff (a database outage must not kill the loop).
 * `stop()` lets the current pass finish.
 */
export class JobLoop {
  private running = false;
  private current: Promise<void> | undefined;
  private sleeper: { timer: NodeJS.Timeout; resolve: () => void } | undefined;
  private woken = false;

  constructor(private readonly options: LoopOptions) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.current = this.run();
  }

  /** Ask for a pass now (new work was committed). */
  wake(): void {
    this.woken = true;
    if (this.sleeper) {
      clearTimeout(this.sleeper.timer);
      this.sleeper.resolve();
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.current;
  }

  private async run() {
    let failures = 0;
    while (this.running) {
      let handled = 0;
      this.woken = false;
      try {
        handled = await this.options.pass();
        failures = 0;
      } catch (error) {
        failures++;
        this.options.log.error({ err: error, loop: this.options.name, failures }, 'job loop pass failed');
      }
      if (!this.running) break;
      if (handled > 0 && failures === 0) continue;
      if (this.woken && failures === 0) continue;
      const delay = failures ? Math.min(this.options.idleMs * 2 ** failures, 5000) : this.options.idleMs;
      await new Promise<void>((resolve) => {
        this.sleeper = { timer: setTimeout(resolve, delay), resolve };
      });
      this.sleeper = undefined;
    }
  }
}
