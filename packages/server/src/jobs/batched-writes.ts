/**
 * Writes items as they come, a few at a time, one write at a time: `afterMs` after the first
 * unwritten item, or as soon as `atCount` wait. After a write fails, the later ones are not
 * made, and `close` (which writes what waits) throws its error.
 */
export function batchedWrites<T>(write: (items: T[]) => Promise<unknown>, { afterMs, atCount }: { afterMs: number; atCount: number }) {
  let waiting: T[] = [];
  let timer: NodeJS.Timeout | undefined;
  let chain: Promise<void> = Promise.resolve();
  let failure: { error: unknown } | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (waiting.length === 0) return;
    const taken = waiting;
    waiting = [];
    chain = chain
      .then(async () => {
        if (!failure) await write(taken);
      })
      .catch((error: unknown) => {
        failure = { error };
      });
  };
  return {
    add(item: T) {
      waiting.push(item);
      if (waiting.length >= atCount) flush();
      else timer ??= setTimeout(flush, afterMs);
    },
    async close() {
      flush();
      await chain;
      if (failure) throw failure.error;
    },
  };
}
