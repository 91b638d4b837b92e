/**
 * Sizes of the reliability suite. The short mode runs inside `npm test` on a shared 2-core CI
 * machine; HERALD_SOAK=1 selects the long (soak) mode for local runs. Every loop of the suite is
 * bounded by these counts and by a deadline.
 */
export const SOAK = process.env.HERALD_SOAK === '1';

export const SIZES = SOAK
  ? {
      notifications: 20_000,
      workerKills: 12,
      killEveryMs: 5_000,
      rateHammerMs: 10_000,
      outageLoadMs: 20_000,
      outageMs: 8_000,
      badRequests: 10_000,
      isolationRounds: 3,
      slowClients: 100,
      idleConnections: 500,
      normalRequests: 1_000,
    }
  : {
      notifications: 2_000,
      workerKills: 3,
      killEveryMs: 3_000,
      rateHammerMs: 4_000,
      outageLoadMs: 9_000,
      outageMs: 4_000,
      badRequests: 1_500,
      isolationRounds: 1,
      slowClients: 20,
      idleConnections: 500,
      normalRequests: 200,
    };

/** Per-test deadline for node:test, long enough for the soak sizes. */
export const TEST_TIMEOUT_MS = SOAK ? 30 * 60_000 : 170_000;
