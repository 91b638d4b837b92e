import { requireLiveKey, type KeyHolder } from '../auth/live-key.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../http/errors.js';
import { cancelPending, findSchedule } from './schedule-store.js';

/**
 * DELETE /v1/schedule/:id. `cancelled: true` when this call moved the schedule from PENDING to
 * CANCELLED; `cancelled: false` when it had already left PENDING (cancelled before, or a one-time
 * schedule that has already run): cancelling is idempotent and never an error for the owner.
 * Another protocol's schedule answers 404 exactly like an unknown id; a sandbox key's cancel of a
 * production schedule answers 403.
 */
export async function cancelSchedule(deps: Deps, sender: KeyHolder, id: string): Promise<{ cancelled: boolean }> {
  const { protocolId } = sender;
  if (sender.environment !== 'production') {
    // A schedule's environment never changes: a sandbox key may cancel its own, not a live one.
    const schedule = await findSchedule(deps.db, protocolId, id);
    if (!schedule) throw new ApiError('SCHEDULE_NOT_FOUND', `Schedule ${id} not found`);
    if (schedule.environment === 'production') requireLiveKey(sender.environment, 'Cancelling a production schedule', 'it sends live messages');
  }
  if (await cancelPending(deps.db, protocolId, id, deps.now())) return { cancelled: true };
  if (await findSchedule(deps.db, protocolId, id)) return { cancelled: false };
  throw new ApiError('SCHEDULE_NOT_FOUND', `Schedule ${id} not found`);
}
