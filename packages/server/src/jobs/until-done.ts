import { setTimeout as sleep } from 'node:timers/promises';

/** Waits between tries of a write the database refused (doubling, up to the last). */
const RETRY_MS = [200, 400, 800, 1600, 2000];

/**
 * Runs `write` until the database takes it: a loop's outcomes are kept in memory through an
 * outage, not dropped, and the rows they settle are not left leased until their lease runs out.
 * While the process runs it tries as long as it takes, unless `retries` refuses the failure;
 * once it is stopping, four tries in all, then the last error is thrown. Every write given here
 * must be safe to make again: fenced by the lease it holds (a late one after another worker took
 * the rows changes nothing), since a try whose answer was lost may have committed.
 */
export async function untilDone<T>(
  write: () => Promise<T>,
  {
    stopping,
    failed,
    retries = () => true,
  }: {
    stopping: () => boolean;
    failed: (error: unknown, failures: number) => void;
    /** Whether a failure is tried again at all (by default every one is); false throws it. */
    retries?: (error: unknown) => boolean;
  },
): Promise<T> {
  for (let failures = 0; ; failures++) {
    try {
      return await write();
    } catch (error) {
      if (!retries(error) || (stopping() && failures >= 3)) throw error;
      failed(error, failures + 1);
      await sleep(RETRY_MS[Math.min(failures, RETRY_MS.length - 1)]);
    }
  }
}
