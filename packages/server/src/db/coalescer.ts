export interface CoalescerOptions<In = unknown> {
  /** Batches running at once; further calls wait and are taken together by the next batch. */
  maxInFlight: number;
  /** Calls taken into one batch, at most. */
  maxBatch: number;
  /**
   * With a batch already running, another starts only once the calls waiting weigh at least this
   * much (see `weigh`): many small calls then keep gathering into one batch, while large ones
   * (a bulk request's hundred rows) run side by side. Without it, batches start up to
   * `maxInFlight` as soon as calls wait.
   */
  extraBatchWeight?: number;
  /** A call's weight for `extraBatchWeight`; 1 when not given. */
  weigh?: (input: In) => number;
}

interface Pending<In, Out> {
  input: In;
  weight: number;
  resolve: (output: Out) => void;
  reject: (error: unknown) => void;
}

/**
 * Runs concurrent calls together: calls made while `maxInFlight` batches are running queue up and
 * are handed to `run` as one batch when a batch finishes, so under load one statement serves many
 * callers and when idle a call runs at once (after the current turn of the event loop, so calls
 * made in the same turn share a batch). `run` answers one output per input, in order.
 *
 * A batch that fails is run again one call at a time, so an error reaches only the callers whose
 * own input causes it.
 */
export class Coalescer<In, Out> {
  private queue: Pending<In, Out>[] = [];
  private queuedWeight = 0;
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly run: (inputs: In[]) => Promise<Out[]>,
    private readonly options: CoalescerOptions<In>,
  ) {}

  call(input: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      const weight = this.options.weigh?.(input) ?? 1;
      this.queue.push({ input, weight, resolve, reject });
      this.queuedWeight += weight;
      this.schedule();
    });
  }

  /** Whether another batch may start now. */
  private mayStart(): boolean {
    if (this.queue.length === 0 || this.inFlight >= this.options.maxInFlight) return false;
    return this.inFlight === 0 || this.queuedWeight >= (this.options.extraBatchWeight ?? 0);
  }

  private schedule() {
    if (this.scheduled || !this.mayStart()) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      while (this.mayStart()) {
        const batch = this.queue.splice(0, this.options.maxBatch);
        for (const pending of batch) this.queuedWeight -= pending.weight;
        this.inFlight++;
        void this.runBatch(batch).finally(() => {
          this.inFlight--;
          this.schedule();
        });
      }
    });
  }

  private async runBatch(batch: Pending<In, Out>[]): Promise<void> {
    try {
      const outputs = await this.run(batch.map((pending) => pending.input));
      batch.forEach((pending, i) => pending.resolve(outputs[i]));
    } catch (error) {
      if (batch.length === 1) return batch[0].reject(error);
      await Promise.all(
        batch.map(async (pending) => {
          try {
            const [output] = await this.run([pending.input]);
            pending.resolve(output);
          } catch (own) {
            pending.reject(own);
          }
        }),
      );
    }
  }
}
