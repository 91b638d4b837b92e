/**
 * When schedules run. Pure functions: every clock reading is an argument.
 *
 * Cron occurrences are wall-clock times in the schedule's zone, so a 09:00 job stays at 09:00
 * local across DST changes. Each wall-clock time is resolved with the gap and overlap rules of
 * zone-time.ts: a time skipped by spring-forward runs once when the gap ends (03:00 local; several
 * skipped times collapse into that one run, and into a job already due at 03:00); a time repeated
 * by fall-back runs once, at its first instance, so the repeated hour has no runs of its own.
 */
import { matchesDay, type CronSpec } from './cron-expression.js';
import { instantOfWallClock, wallClockAt } from './zone-time.js';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
/** Long enough for the rarest expression (29 February on a day-of-month-only rule: 8 years apart). */
const SEARCH_DAYS = 366 * 9;

interface Day {
  /** Local milliseconds of the day's midnight. */
  start: number;
  month: number;
  day: number;
  weekday: number;
}

function dayOf(startOfDay: number): Day {
  const date = new Date(startOfDay);
  return { start: startOfDay, month: date.getUTCMonth() + 1, day: date.getUTCDate(), weekday: date.getUTCDay() };
}

const midnight = (local: number) => Math.floor(local / DAY) * DAY;

/** The first occurrence strictly after `after`, or null when there is none within nine years. */
export function nextOccurrence(spec: CronSpec, zone: string, after: Date): Date | null {
  // Wall-clock times before the one showing at `after` resolve to instants at or before it.
  const from = Math.floor(wallClockAt(after, zone) / MINUTE) * MINUTE;
  const first = midnight(from);
  for (let start = first; start < first + SEARCH_DAYS * DAY; start += DAY) {
    const day = dayOf(start);
    if (!matchesDay(spec, day.month, day.day, day.weekday)) continue;
    for (const hour of spec.hours) {
      for (const minute of spec.minutes) {
        const local = start + hour * HOUR + minute * MINUTE;
        if (local < from) continue;
        const instant = instantOfWallClock(local, zone);
        if (instant > after) return instant;
      }
    }
  }
  return null;
}

/** The last occurrence at or before `at`, or null when there is none within nine years. */
export function latestOccurrence(spec: CronSpec, zone: string, at: Date): Date | null {
  // Start from the latest wall-clock time that can still resolve to `at` or earlier: inside a
  // repeated (fall-back) hour the clock shows an earlier time than the summer-time reading.
  const readings = [-DAY, 0, DAY].map((shift) => wallClockAt(new Date(at.getTime() + shift), zone) - shift);
  const until = Math.floor(Math.max(...readings) / MINUTE) * MINUTE;
  const last = midnight(until);
  for (let start = last; start > last - SEARCH_DAYS * DAY; start -= DAY) {
    const day = dayOf(start);
    if (!matchesDay(spec, day.month, day.day, day.weekday)) continue;
    for (let h = spec.hours.length - 1; h >= 0; h--) {
      for (let m = spec.minutes.length - 1; m >= 0; m--) {
        const local = start + spec.hours[h] * HOUR + spec.minutes[m] * MINUTE;
        if (local > until) continue;
        const instant = instantOfWallClock(local, zone);
        if (instant <= at) return instant;
      }
    }
  }
  return null;
}

export interface CronFire {
  /** The occurrence to fire now. */
  occurrence: Date;
  /** The schedule's next run after it; null when the expression has no further occurrence. */
  next: Date | null;
  /** Occurrences between `due` and `occurrence` that are skipped (downtime catch-up). */
  skipped: boolean;
}

/**
 * What a cron schedule due at `due` fires at `now`. On time, that is `due` itself. After downtime
 * only the latest missed occurrence fires (never a burst of the backlog), and the next run is the
 * first occurrence after it, which is then after `now`. The next run is computed from the
 * occurrence, never from `now`, so a late worker does not shift the schedule.
 */
export function planCronFire(spec: CronSpec, zone: string, due: Date, now: Date): CronFire {
  const latest = latestOccurrence(spec, zone, now);
  const occurrence = latest && latest > due ? latest : due;
  return { occurrence, next: nextOccurrence(spec, zone, occurrence), skipped: occurrence !== due };
}
