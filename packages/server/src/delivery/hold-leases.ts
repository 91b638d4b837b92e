import type { Deps } from '../deps.js';
import { renewLeases, type DueNotification } from './delivery-store.js';

export interface HeldLeases {
  /** Whether a send of the claim may start (see below). */
  held(n: DueNotification): boolean;
  /** Stops renewing, once the last renewal is over. */
  release(): Promise<void>;
}

/**
 * Keeps a batch's leases from expiring while it is sent and settled: every third of the lease,
 * the claims still held are leased for a full term again. A slow provider or a large batch then
 * never lets another worker take a notification that is still being sent; a worker that dies
 * stops renewing, and its claims come due once the last lease runs out.
 */
export function holdLeases(
  deps: Pick<Deps, 'db' | 'now' | 'log'>,
  leaseMs: number,
  claims: DueNotification[],
  leasedAtMs: number,
): HeldLeases {
  if (claims.length === 0) return { held: () => true, release: async () => {} };
  let timer: NodeJS.Timeout | undefined;
  let renewing: Promise<void> = Promise.resolve();
  let released = false;
  const every = leaseMs / 3;
  // When the leases run out, on this process's monotonic clock (a paused process's timers fire
  // late, but this clock keeps counting): from the claim (`leasedAtMs`, read with the `now` of its lease),
  // then from each renewal that committed.
  let heldUntil = leasedAtMs + leaseMs;
  /** Claims a renewal found no longer this worker's at all (settled, given back or taken over). */
  const lost = new Set<string>();
  const schedule = (delay = every) => {
    timer = setTimeout(() => {
      const asked = performance.now();
      const pending = claims.filter((n) => !lost.has(n.id));
      renewing = renewLeases(deps.db, pending, new Date(deps.now().getTime() + leaseMs))
        .then((gone) => {
          for (const id of gone) lost.add(id);
          heldUntil = asked + leaseMs;
        })
        .catch((error: unknown) => deps.log.warn({ err: error, claims: claims.length }, 'delivery: could not renew leases'))
        .finally(() => {
          if (!released) schedule();
        });
    }, delay);
    timer.unref();
  };
  // The lease runs from the claim, not from now: the claim's transaction may have taken a while.
  schedule(Math.max(0, leasedAtMs + every - performance.now()));
  return {
    /**
     * Whether a send may start: more than a third of the lease is left. Renewed every third, a
     * lease has two thirds left or more, unless the renewals failed or the process was paused
     * (SIGSTOP, a frozen VM or container) past them, and another worker may then have taken
     * the rows: only the sends already at a provider may then repeat, not the rest of the batch.
     * A claim the last renewal did not find is another worker's (or settled) whatever the time.
     */
    held: (n) => heldUntil - performance.now() > every && !lost.has(n.id),
    async release() {
      released = true;
      clearTimeout(timer);
      await renewing;
    },
  };
}
