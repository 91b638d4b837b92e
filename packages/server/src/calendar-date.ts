/**
 * The UTC midnight starting a calendar date that really exists (no 30 February, no month 13),
 * the year taken as written: Date.UTC would read years 0–99 as 1900–1999. Undefined otherwise.
 */
export function calendarDate(year: number, month: number, day: number): Date | undefined {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day ? date : undefined;
}

/**
 * The same instant of the same date a year later, as a calendar counts a year: 366 days across
 * a 29 February, and 28 February after a 29 February (the month's last day, as billing periods end).
 */
export function oneYearAfter(instant: Date): Date {
  const later = new Date(instant);
  later.setUTCFullYear(instant.getUTCFullYear() + 1);
  // 29 February of a year without one rolled over into 1 March: step back to 28 February.
  if (later.getUTCMonth() !== instant.getUTCMonth()) later.setUTCDate(0);
  return later;
}
