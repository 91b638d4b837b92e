import type { Deps } from '../deps.js';
import { ApiError } from '../http/errors.js';
import { cancelPending, findSchedule } from './schedule-store.js';

/**
 * DELETE /v1/schedule/:id. `cancelled: true` when this call moved the schedule from PENDING to
 * CANCELLED; `cancelled: false` when it had already left PENDING (cancelled before, or a one-time
 * schedule that has already run): cancelling is idempotent and never an error for the owner.
 * Another protocol's schedule answers 404 exactly like an unknown id.
 */
export async function cancelSchedule(deps: Deps, protocolId: string, id: string): Promise<{ cancelled: boolean }> {
  if (await cancelPending(deps.db, protocolId, id, deps.now())) return { cancelled: true };
  if (await findSchedule(deps.db, protocolId, id)) return { cancelled: false };
  throw new ApiError('SCHEDULE_NOT_FOUND', `Schedule ${id} not found`);
}
