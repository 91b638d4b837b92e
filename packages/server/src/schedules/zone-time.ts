/**
 * Wall-clock time in IANA zones. A wall-clock time is held as "local milliseconds": the epoch
 * milliseconds it would be if the zone were UTC, so calendar maths on it is plain Date.UTC maths.
 *
 * Turning a wall-clock time back into an instant has two awkward cases, decided here once for
 * one-time and cron schedules alike (docs: schedules):
 * - gap (spring forward, e.g. 02:30 on the US change day does not exist): the instant the gap
 *   ends, i.e. 03:00 local. Every time inside one gap resolves to that same instant.
 * - overlap (fall back, e.g. 01:30 happens twice): the first of the two instants (still on
 *   summer time).
 */
import { IANAZone } from 'luxon';
import { calendarDate } from '../calendar-date.js';

const MINUTE = 60_000;
const DAY = 86_400_000;

const SPAN = 6 * 3_600_000;
const CACHED_SPANS = 50_000;

/** A zone's offsets over one six-hour span: `first` until `change`, `last` from then on. */
interface Span {
  first: number;
  last: number;
  change: number;
}

interface ZoneOffsets {
  zone: IANAZone;
  spans: Map<number, Span>;
}

const zones = new Map<string, ZoneOffsets>();

function zoneOf(name: string): ZoneOffsets {
  let entry = zones.get(name);
  if (!entry) {
    const zone = IANAZone.create(name);
    if (!zone.isValid) throw new RangeError(`unknown time zone ${name}`);
    entry = { zone, spans: new Map() };
    zones.set(name, entry);
  }
  return entry;
}

/**
 * Offset from UTC in minutes at `epochMs`. Asking Intl costs ~10 µs, and one schedule run asks a
 * dozen times, so offsets are cached per six-hour span. Equal offsets at both ends of a span mean
 * no change inside it (no zone changes its offset twice within six hours); otherwise the change
 * instant is found once by binary search.
 */
function offsetAt(name: string, epochMs: number): number {
  if (name === 'UTC') return 0;
  const { zone, spans } = zoneOf(name);
  const key = Math.floor(epochMs / SPAN);
  let span = spans.get(key);
  if (!span) {
    const from = key * SPAN;
    const first = zone.offset(from);
    const last = zone.offset(from + SPAN);
    let change = from + SPAN;
    if (first !== last) {
      let lo = from;
      while (lo < change) {
        const mid = Math.floor((lo + change) / 2);
        if (zone.offset(mid) === last) change = mid;
        else lo = mid + 1;
      }
    }
    if (spans.size >= CACHED_SPANS) spans.clear();
    span = { first, last, change };
    spans.set(key, span);
  }
  return epochMs < span.change ? span.first : span.last;
}

/**
 * The zone name to store for `name`, or undefined when `name` is not an IANA zone. Fixed offsets
 * (`+03:00`, `UTC+3`) are not zones and are refused. The name is kept as given, with its case
 * corrected (`america/new_york` → `America/New_York`); links are not replaced, because ICU would
 * turn `Asia/Kolkata` into the older `Asia/Calcutta`, and so keep their case as given (ICU names
 * no link, so it cannot say how one is written).
 */
export function canonicalTimeZone(name: string): string | undefined {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name) || !IANAZone.isValidZone(name)) return undefined;
  try {
    const resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
    return resolved.toLowerCase() === name.toLowerCase() ? resolved : name;
  } catch {
    return undefined;
  }
}

/** The wall-clock time (local milliseconds) in `zone` at `instant`. */
export function wallClockAt(instant: Date, zone: string): number {
  const ms = instant.getTime();
  return ms + offsetAt(zone, ms) * MINUTE;
}

/**
 * The instant at which the zone's clocks show `local` (local milliseconds), with the gap and
 * overlap rules of this file. Assumes at most one offset change within a day of `local`, which
 * holds for every zone since 1900 (Samoa's skipped 30 Dec 2011 included).
 */
export function instantOfWallClock(local: number, zone: string): Date {
  const before = offsetAt(zone, local - DAY);
  const after = offsetAt(zone, local + DAY);
  const valid = [...new Set([before, after])]
    .map((offset) => local - offset * MINUTE)
    .filter((candidate) => offsetAt(zone, candidate) * MINUTE === local - candidate);
  if (valid.length) return new Date(Math.min(...valid));
  return new Date(gapEnd(zone, local - after * MINUTE, local - before * MINUTE, after));
}

/** First whole minute in [from, to] where the zone's offset is already `offset` (binary search). */
function gapEnd(zone: string, from: number, to: number, offset: number): number {
  let lo = Math.floor(from / MINUTE);
  let hi = Math.ceil(to / MINUTE);
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetAt(zone, mid * MINUTE) === offset) hi = mid;
    else lo = mid + 1;
  }
  return lo * MINUTE;
}

const WALL_CLOCK = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?([Zz]|([+-])(\d{2})(?::?(\d{2}))?)?$/;

/** A WALL_CLOCK match's offset in milliseconds (`Z` is 0); undefined when none is written, null when out of range (+24:00, +05:60). */
function offsetOf(match: RegExpExecArray): number | null | undefined {
  const [written, sign, hours, minutes = '00'] = match.slice(8);
  if (!written) return undefined;
  if (!sign) return 0;
  if (Number(hours) > 23 || Number(minutes) > 59) return null;
  return (sign === '-' ? -1 : 1) * (Number(hours) * 60 + Number(minutes)) * MINUTE;
}

/**
 * The date and time fields of an ISO 8601 date-time, as local milliseconds; any offset or `Z` is
 * ignored because the caller's `timezone` says where the wall clock hangs. Undefined when the text
 * is not an ISO 8601 date-time or names a day or time that does not exist (2026-02-30, 24:00).
 */
export function parseWallClock(text: string): number | undefined {
  const match = WALL_CLOCK.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second = 0] = match.slice(1, 7).map((part) => Number(part ?? 0));
  if (offsetOf(match) === null) return undefined;
  const millisecond = match[7] ? Number(match[7].slice(0, 3).padEnd(3, '0')) : 0;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const date = calendarDate(year, month, day);
  return date && date.getTime() + ((hour * 60 + minute) * 60 + second) * 1000 + millisecond;
}

/**
 * The UTC offset an ISO 8601 date-time is written with, in milliseconds (`Z` is 0; `+02:00` is
 * two hours); undefined when it has none or is not a date-time parseWallClock takes.
 */
export function writtenOffset(text: string): number | undefined {
  const match = WALL_CLOCK.exec(text);
  return (match && offsetOf(match)) ?? undefined;
}

/** `2026-06-01T09:00:00` — local milliseconds written without an offset (milliseconds only when not zero). */
export function formatWallClock(local: number): string {
  return formatInstant(new Date(local)).slice(0, -1);
}

/**
 * `2026-06-01T13:00:00Z`: schedule instants are written as the contract's example writes them,
 * with milliseconds only when there are any.
 */
export function formatInstant(instant: Date): string {
  return instant.toISOString().replace(/\.000Z$/, 'Z');
}
