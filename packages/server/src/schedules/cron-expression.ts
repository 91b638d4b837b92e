/**
 * Five-field cron expressions (minute hour day-of-month month day-of-week), Vixie cron syntax:
 * `*`, numbers, ranges `a-b`, steps `*\/n`, `a-b/n` and `a/n` (from a to the field's end), lists
 * `a,b`, month names JAN-DEC and day names SUN-SAT (any case). Day-of-week 0 and 7 are Sunday.
 * Seconds, years, macros (@daily) and Quartz extensions (? L W #) are refused with a message.
 */

export interface CronSpec {
  source: string;
  /** Ascending. */
  minutes: number[];
  /** Ascending. */
  hours: number[];
  daysOfMonth: Set<number>;
  months: Set<number>;
  /** 0 = Sunday … 6 = Saturday. */
  daysOfWeek: Set<number>;
  /**
   * As in Vixie cron: when both day fields are restricted (neither starts with `*`), a day matches
   * when either matches; otherwise both must.
   */
  eitherDay: boolean;
}

export class CronSyntaxError extends Error {}

interface Field {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
  /** Where names[0] sits (JAN is 1, SUN is 0). */
  nameBase?: number;
}

const MONTH_NAMES = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] as const;
const DAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] as const;

const FIELDS: readonly Field[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTH_NAMES, nameBase: 1 },
  { name: 'day-of-week', min: 0, max: 7, names: DAY_NAMES, nameBase: 0 },
];

const LAYOUT = 'minute hour day-of-month month day-of-week';
/** Longest day of each month; February counts its leap day. */
const MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function fieldCountMessage(parts: string[]): string {
  const hint =
    parts.length === 1 && parts[0].startsWith('@')
      ? '; macros such as @daily are not supported (write 0 0 * * *)'
      : parts.length === 6 || parts.length === 7
        ? '; seconds and years are not supported'
        : '';
  return `cronExpr must have exactly 5 fields (${LAYOUT}), got ${parts.length}${hint}`;
}

function fail(field: Field, problem: string): never {
  throw new CronSyntaxError(`cronExpr ${field.name} field: ${problem}`);
}

function parseValue(field: Field, token: string): number {
  if (/^\d+$/.test(token)) {
    const value = Number(token);
    if (value < field.min || value > field.max) fail(field, `${token} is out of range (${field.min}-${field.max})`);
    return value;
  }
  if (field.names && /^[A-Za-z]+$/.test(token)) {
    const index = field.names.indexOf(token.toUpperCase() as never);
    if (index < 0) {
      fail(field, `unknown name "${token}" (use ${field.names[0]}-${field.names[field.names.length - 1]} or ${field.min}-${field.max})`);
    }
    return index + field.nameBase!;
  }
  if (token === '') fail(field, 'a value is missing');
  const allowed = field.names ? `a number (${field.min}-${field.max}) or a name (${field.names[0]}-${field.names[field.names.length - 1]})` : `a number (${field.min}-${field.max})`;
  return fail(field, `"${token}" is not ${allowed}`);
}

/** The field's last value when stepping: day-of-week runs 0-6, its 7 being only another name for Sunday. */
const lastOf = (field: Field) => (field.name === 'day-of-week' ? 6 : field.max);

function parseStep(field: Field, text: string): number {
  const span = lastOf(field) - field.min;
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > span) {
    fail(field, `step "${text}" must be a whole number from 1 to ${span}`);
  }
  return Number(text);
}

/** One list item: `*`, `a`, `a-b`, each optionally `/step`. */
function expandItem(field: Field, item: string): number[] {
  const slash = item.split('/');
  if (slash.length > 2) fail(field, `"${item}" has more than one step (/)`);
  const [range, stepText] = slash;
  const step = stepText === undefined ? 1 : parseStep(field, stepText);
  let from: number;
  let to: number;
  if (range === '*') {
    from = field.min;
    to = lastOf(field);
  } else {
    const bounds = range.split('-');
    if (bounds.length > 2) fail(field, `"${range}" is not a range (write a-b)`);
    from = parseValue(field, bounds[0]);
    // `a/n` runs from a to the end of the field, as in Vixie cron.
    to = bounds.length === 2 ? parseValue(field, bounds[1]) : stepText === undefined ? from : Math.max(from, lastOf(field));
    if (to < from) fail(field, `range ${range} runs backwards (write it as two ranges, e.g. ${bounds[0]}-${field.max},${field.min}-${bounds[1]})`);
  }
  const values: number[] = [];
  for (let v = from; v <= to; v += step) values.push(field.name === 'day-of-week' && v === 7 ? 0 : v);
  return values;
}

function expandField(field: Field, text: string): number[] {
  const values = new Set<number>();
  for (const item of text.split(',')) {
    if (item === '') fail(field, `"${text}" has an empty list item`);
    for (const value of expandItem(field, item)) values.add(value);
  }
  return [...values].sort((a, b) => a - b);
}

/** Parses and checks a cron expression; throws CronSyntaxError with a message naming the mistake. */
export function parseCron(expression: string): CronSpec {
  const parts = expression.trim().split(/\s+/).filter(Boolean);
  if (parts.length !== 5) throw new CronSyntaxError(fieldCountMessage(parts));
  const [minutes, hours, daysOfMonth, months, daysOfWeek] = parts.map((part, i) => expandField(FIELDS[i], part));
  const spec: CronSpec = {
    source: parts.join(' '),
    minutes,
    hours,
    daysOfMonth: new Set(daysOfMonth),
    months: new Set(months),
    daysOfWeek: new Set(daysOfWeek),
    eitherDay: !parts[2].startsWith('*') && !parts[4].startsWith('*'),
  };
  // Only the day-of-month can make an expression impossible (0 0 30 2 *); with OR-ed day fields
  // the day-of-week alone always matches some day.
  if (!spec.eitherDay && !months.some((m) => daysOfMonth.some((d) => d <= MONTH_DAYS[m - 1]))) {
    throw new CronSyntaxError(`cronExpr never fires: no month in "${parts[3]}" has a day "${parts[2]}"`);
  }
  return spec;
}

/** Whether the calendar day matches the expression's day-of-month, month and day-of-week fields. */
export function matchesDay(spec: CronSpec, month: number, day: number, weekday: number): boolean {
  if (!spec.months.has(month)) return false;
  const dom = spec.daysOfMonth.has(day);
  const dow = spec.daysOfWeek.has(weekday);
  return spec.eitherDay ? dom || dow : dom && dow;
}
