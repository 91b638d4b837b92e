import type { Deps } from '../deps.js';
import { JobLoop } from '../jobs/loop.js';
import { DEFAULT_FIRE_OPTIONS, fireDueSchedules, type FireOptions } from './fire-schedules.js';
import { nextDueAt } from './schedule-store.js';

/** Longest sleep of an idle scheduler; it also bounds how late a schedule created elsewhere fires. */
const POLL_MS = 200;

/**
 * The scheduler loop: fires due schedules. When a pass finds nothing due, it sets a timer for the
 * next schedule due within the poll interval, so an idle gateway fires on time rather than up to
 * one poll late. Wakes on the `schedules` topic too.
 */
export function createScheduleWorker(deps: Deps, options: Partial<FireOptions> = {}): JobLoop {
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  const fire: FireOptions = { ...DEFAULT_FIRE_OPTIONS, ...options, stopping: () => stopping };

  async function wakeAtNextDue() {
    const due = await nextDueAt(deps.db, deps.now());
    const wait = due ? due.getTime() - deps.now().getTime() : POLL_MS;
    // Due already but not claimed: another worker holds it; the regular poll looks again.
    if (wait <= 0 || wait >= POLL_MS) return;
    clearTimeout(timer);
    timer = setTimeout(() => loop.wake(), wait);
  }

  async function pass(): Promise<number> {
    if (stopping) return 0;
    const fired = await fireDueSchedules(deps, fire);
    if (fired === 0) await wakeAtNextDue();
    return fired;
  }

  const loop = new JobLoop({ name: 'schedules', log: deps.log, idleMs: POLL_MS, pass });
  deps.wakeup.on('schedules', () => loop.wake());
  const stop = loop.stop.bind(loop);
  loop.stop = async () => {
    stopping = true;
    clearTimeout(timer);
    await stop();
  };
  return loop;
}
