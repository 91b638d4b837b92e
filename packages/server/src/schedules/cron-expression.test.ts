import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CronSyntaxError, matchesDay, parseCron } from './cron-expression.js';

function refusal(expression: string): string {
  try {
    parseCron(expression);
  } catch (error) {
    assert.ok(error instanceof CronSyntaxError, `${expression}: ${String(error)}`);
    return error.message;
  }
  assert.fail(`"${expression}" was accepted`);
}

describe('parseCron', () => {
  it('expands numbers, ranges, steps, lists and names', () => {
    const spec = parseCron('*/15 9-17/4 1,15 jan-MAR,Dec MON-FRI');
    assert.deepEqual(spec.minutes, [0, 15, 30, 45]);
    assert.deepEqual(spec.hours, [9, 13, 17]);
    assert.deepEqual([...spec.daysOfMonth], [1, 15]);
    assert.deepEqual([...spec.months].sort((a, b) => a - b), [1, 2, 3, 12]);
    assert.deepEqual([...spec.daysOfWeek].sort(), [1, 2, 3, 4, 5]);
    assert.equal(spec.source, '*/15 9-17/4 1,15 jan-MAR,Dec MON-FRI');
  });

  it('reads `a/n` as a to the end of the field, and 7 as Sunday', () => {
    assert.deepEqual(parseCron('5/20 * * * *').minutes, [5, 25, 45]);
    assert.deepEqual([...parseCron('0 0 * * 7').daysOfWeek], [0]);
    assert.deepEqual([...parseCron('0 0 * * 5-7').daysOfWeek].sort(), [0, 5, 6]);
    assert.deepEqual([...parseCron('0 0 * * 1/2').daysOfWeek].sort(), [1, 3, 5]);
  });

  it('collapses blanks and tabs between fields', () => {
    assert.equal(parseCron('  0\t9  * *   1 ').source, '0 9 * * 1');
  });

  it('ORs restricted day fields and ANDs when one starts with *', () => {
    const either = parseCron('0 0 13 * FRI');
    assert.equal(either.eitherDay, true);
    assert.equal(matchesDay(either, 6, 13, 6), true); // 13th, a Saturday
    assert.equal(matchesDay(either, 6, 12, 5), true); // a Friday, the 12th
    assert.equal(matchesDay(either, 6, 11, 4), false);
    const both = parseCron('0 0 */2 * FRI');
    assert.equal(both.eitherDay, false);
    assert.equal(matchesDay(both, 6, 12, 5), false); // even day
    assert.equal(matchesDay(both, 6, 13, 5), true);
    assert.equal(matchesDay(parseCron('0 0 * 6 *'), 7, 1, 3), false);
  });

  it('refuses the wrong number of fields, saying how many were given', () => {
    assert.equal(refusal(''), 'cronExpr must have exactly 5 fields (minute hour day-of-month month day-of-week), got 0');
    assert.equal(refusal('* * * *'), 'cronExpr must have exactly 5 fields (minute hour day-of-month month day-of-week), got 4');
    assert.match(refusal('0 * * * * *'), /got 6; seconds and years are not supported$/);
    assert.match(refusal('@daily'), /got 1; macros such as @daily are not supported \(write 0 0 \* \* \*\)$/);
  });

  it('refuses out-of-range values, naming the field and its range', () => {
    assert.equal(refusal('60 * * * *'), 'cronExpr minute field: 60 is out of range (0-59)');
    assert.equal(refusal('0 24 * * *'), 'cronExpr hour field: 24 is out of range (0-23)');
    assert.equal(refusal('0 0 0 * *'), 'cronExpr day-of-month field: 0 is out of range (1-31)');
    assert.equal(refusal('0 0 32 * *'), 'cronExpr day-of-month field: 32 is out of range (1-31)');
    assert.equal(refusal('0 0 * 13 *'), 'cronExpr month field: 13 is out of range (1-12)');
    assert.equal(refusal('0 0 * * 8'), 'cronExpr day-of-week field: 8 is out of range (0-7)');
    assert.equal(refusal('0 1-25 * * *'), 'cronExpr hour field: 25 is out of range (0-23)');
  });

  it('refuses bad steps', () => {
    assert.equal(refusal('*/0 * * * *'), 'cronExpr minute field: step "0" must be a whole number from 1 to 59');
    assert.equal(refusal('*/x * * * *'), 'cronExpr minute field: step "x" must be a whole number from 1 to 59');
    assert.equal(refusal('0 */24 * * *'), 'cronExpr hour field: step "24" must be a whole number from 1 to 23');
    assert.equal(refusal('0 0 * * */7'), 'cronExpr day-of-week field: step "7" must be a whole number from 1 to 6');
    assert.equal(refusal('*/ * * * *'), 'cronExpr minute field: step "" must be a whole number from 1 to 59');
    assert.equal(refusal('1/2/3 * * * *'), 'cronExpr minute field: "1/2/3" has more than one step (/)');
  });

  it('refuses unknown names and names where only numbers are allowed', () => {
    assert.equal(refusal('0 0 * JANUARY *'), 'cronExpr month field: unknown name "JANUARY" (use JAN-DEC or 1-12)');
    assert.equal(refusal('0 0 * * FUNDAY'), 'cronExpr day-of-week field: unknown name "FUNDAY" (use SUN-SAT or 0-7)');
    assert.equal(refusal('0 noon * * *'), 'cronExpr hour field: "noon" is not a number (0-23)');
    assert.equal(refusal('0 0 L * *'), 'cronExpr day-of-month field: "L" is not a number (1-31)');
    assert.equal(refusal('0 0 ? * *'), 'cronExpr day-of-month field: "?" is not a number (1-31)');
    assert.equal(refusal('0 0 * * MON#2'), 'cronExpr day-of-week field: "MON#2" is not a number (0-7) or a name (SUN-SAT)');
    assert.equal(refusal('-5 * * * *'), 'cronExpr minute field: a value is missing');
  });

  it('refuses backwards ranges, empty list items and expressions that never fire', () => {
    assert.equal(refusal('0 22-2 * * *'), 'cronExpr hour field: range 22-2 runs backwards (write it as two ranges, e.g. 22-23,0-2)');
    assert.equal(refusal('1,,2 * * * *'), 'cronExpr minute field: "1,,2" has an empty list item');
    assert.equal(refusal('0 0 1-2-3 * *'), 'cronExpr day-of-month field: "1-2-3" is not a range (write a-b)');
    assert.equal(refusal('0 0 30 2 *'), 'cronExpr never fires: no month in "2" has a day "30"');
    assert.equal(refusal('0 0 31 APR,JUN *'), 'cronExpr never fires: no month in "APR,JUN" has a day "31"');
    // Restricted day-of-week ORs with the day-of-month, so this one fires on Mondays in February.
    assert.doesNotThrow(() => parseCron('0 0 30 2 MON'));
    assert.doesNotThrow(() => parseCron('0 0 29 2 *'));
  });
});
