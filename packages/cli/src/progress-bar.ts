import type { Stream } from './output.js';

const WIDTH = 30;

/**
 * A one-line progress bar redrawn in place (carriage return), for a person at a terminal only:
 * on a pipe, or in --json mode, it draws nothing.
 */
export class ProgressBar {
  private readonly enabled: boolean;

  constructor(
    private readonly stream: Stream,
    private readonly total: number,
    private readonly label: string,
    enabled: boolean,
  ) {
    this.enabled = enabled && Boolean(stream.isTTY);
  }

  update(done: number): void {
    if (!this.enabled) return;
    const filled = this.total === 0 ? WIDTH : Math.round((done / this.total) * WIDTH);
    this.stream.write(`\r${this.label} [${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ${done}/${this.total}`);
  }

  /** Ends the line so later output starts on a fresh one. */
  finish(): void {
    if (this.enabled) this.stream.write('\n');
  }
}
