import { cancelled, EXIT, type ExitCode } from './exit-codes.js';
import { withRetryKey } from './idempotency-key.js';
import type { Output } from './output.js';

/** What a command has already done that a Ctrl-C must not hide. */
export interface PartialOutcome {
  /** Prints the result so far on stdout, as the command itself would (none yet: omitted). */
  show?: () => void;
  /** The cancellation's message: what was already done. */
  message: string;
  /** The key that makes running the command again safe, and what running it again does (withRetryKey's default when left out). */
  retry?: { idempotencyKey: string; note?: string };
}

/**
 * Ctrl-C. Once a command has sent something it records it here, so that a cancellation still
 * reports what was sent (on stdout, as JSON with --json) and the key to run the command again
 * with, in the one error format: a script that interrupts a `--wait` must not take an accepted
 * message for unsent.
 */
export class Interruption {
  private out: Output | undefined;
  private partial: PartialOutcome | undefined;

  /** The output of the command line now running. */
  watch(out: Output): void {
    this.out = out;
    this.partial = undefined;
  }

  /** What the running command has done so far (undefined: nothing that needs telling). */
  record(partial: PartialOutcome | undefined): void {
    this.partial = partial;
  }

  /** Reports the cancellation, after the result so far; returns the exit code. */
  cancel(): ExitCode {
    const partial = this.partial;
    const error = cancelled(partial ? `Cancelled: ${partial.message}` : 'Cancelled');
    if (partial?.retry) withRetryKey(error, partial.retry.idempotencyKey, partial.retry.note);
    if (this.out) {
      this.out.note(''); // past the ^C the terminal echoed
      partial?.show?.();
      this.out.error(error);
    }
    return EXIT.usage;
  }
}

/** The process's one: Ctrl-C stops the whole process. */
export const interruption = new Interruption();
