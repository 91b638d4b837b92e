/** Time ranges and rates of the reports; pure, `now` passed in. */

import { calendarDate } from '../calendar-date.js';

export const PERIODS = { '7d': 7, '30d': 30, '90d': 90 } as const;
export type Period = keyof typeof PERIODS;

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

const floorHour = (date: Date) => new Date(Math.floor(date.getTime() / HOUR_MS) * HOUR_MS);

/** First hour of a period that ends with the current UTC hour: 7d is that hour and the 167 before. */
export function periodStart(period: Period, now: Date): Date {
  return new Date(floorHour(now).getTime() + HOUR_MS - PERIODS[period] * DAY_MS);
}

/** A fraction in [0, 1]; 0 when nothing was counted. */
export function rate(part: number, whole: number): number {
  return whole > 0 ? part / whole : 0;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})$/i;

/** A calendar date that really exists, as the UTC midnight starting it. */
function parseDate(text: string): Date | undefined {
  const m = DATE.exec(text);
  return m ? calendarDate(Number(m[1]), Number(m[2]), Number(m[3])) : undefined;
}

export class RangeProblem extends Error {}

/**
 * The half-open range [start, end) of `startDate` and `endDate`, in whole UTC hours. A date
 * (YYYY-MM-DD) is a whole UTC day, `endDate`'s included; a date-time with an offset is widened to
 * its hour, `endDate`'s included too (10:00:00 ends the range at 11:00, as 10:30 does). Without `endDate` the range ends with the current hour; without
 * `startDate` it starts 30 days before its end. Throws RangeProblem with a sentence naming the
 * parameter.
 */
export function parseDateRange(startDate: string | undefined, endDate: string | undefined, now: Date): { start: Date; end: Date } {
  const bound = (name: string, text: string): { at: Date; wholeDay: boolean } => {
    const date = parseDate(text);
    if (date) return { at: date, wholeDay: true };
    // The date part must exist too: Date would read 2026-02-30T00:00Z as March 2nd.
    const instant = DATE_TIME.test(text) && parseDate(text.slice(0, 10)) && Number(text.slice(11, 13)) < 24 ? new Date(text) : undefined;
    if (instant && !Number.isNaN(instant.getTime())) return { at: instant, wholeDay: false };
    throw new RangeProblem(`${name} must be an ISO 8601 date (YYYY-MM-DD) or date-time with an offset (hours 00-23, seconds 00-59), got "${text}"`);
  };
  const last = endDate !== undefined ? bound('endDate', endDate) : undefined;
  const first = startDate !== undefined ? bound('startDate', startDate) : undefined;
  // A date ends with its last moment: 2026-11-26 is not before 2026-11-26T05:00Z.
  const lastMoment = last ? (last.wholeDay ? last.at.getTime() + DAY_MS - 1 : last.at.getTime()) : Infinity;
  if (first && lastMoment < first.at.getTime()) throw new RangeProblem(`endDate (${endDate}) is before startDate (${startDate})`);
  const end = !last ? new Date(floorHour(now).getTime() + HOUR_MS) : last.wholeDay ? new Date(last.at.getTime() + DAY_MS) : new Date(floorHour(last.at).getTime() + HOUR_MS);
  // The answer states the end as an ISO 8601 instant, which has four-digit years.
  if (end.getUTCFullYear() > 9999) throw new RangeProblem(`endDate (${endDate}) must end the range within the year 9999`);
  const start = first ? floorHour(first.at) : new Date(end.getTime() - 30 * DAY_MS);
  // Nothing happened before 1970, and the database has no year 0 (and reads years 1–99 in another century).
  if (start.getTime() < 0) {
    throw new RangeProblem(first ? `startDate (${startDate}) must be in 1970 or later` : `endDate (${endDate}) must leave the 30 days before it in 1970 or later`);
  }
  if (start.getTime() >= end.getTime() && !last) throw new RangeProblem(`startDate (${startDate}) is after the current hour`);
  return { start, end };
}

/** The last `days` UTC dates up to and including `now`'s, oldest first, as YYYY-MM-DD. */
export function lastDays(now: Date, days: number): string[] {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return Array.from({ length: days }, (_, i) => new Date(today - (days - 1 - i) * DAY_MS).toISOString().slice(0, 10));
}
