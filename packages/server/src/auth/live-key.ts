import { ApiError } from '../http/errors.js';

/**
 * Refuses (403) a sandbox key's change of something production depends on: a test key, often kept
 * in less guarded places, may send and read in its own environment, not alter what live sends use
 * or where their events go. `doing` names the change, `why` what production takes from it.
 */
export function requireLiveKey(environment: string, doing: string, why: string): void {
  if (environment !== 'production') throw new ApiError('FORBIDDEN', `${doing} needs a live key (hrld_live_…): ${why}`);
}
