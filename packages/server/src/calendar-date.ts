/**
 * The UTC midnight starting a calendar date that really exists (no 30 February, no month 13),
 * the year taken as written: Date.UTC would read years 0–99 as 1900–1999. Undefined otherwise.
 */
export function calendarDate(year: number, month: number, day: number): Date | undefined {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day ? date : undefined;
}
