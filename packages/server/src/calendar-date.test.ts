import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { calendarDate, oneYearAfter } from './calendar-date.js';

describe('calendar dates', () => {
  it('takes only dates that exist, the year as written', () => {
    assert.equal(calendarDate(2028, 2, 29)?.toISOString(), '2028-02-29T00:00:00.000Z');
    assert.equal(calendarDate(2027, 2, 29), undefined);
    assert.equal(calendarDate(2027, 13, 1), undefined);
    assert.equal(calendarDate(50, 1, 1)?.getUTCFullYear(), 50);
  });

  it('counts a year as a calendar does', () => {
    const after = (iso: string) => oneYearAfter(new Date(iso)).toISOString();
    assert.equal(after('2026-11-27T12:34:56.789Z'), '2027-11-27T12:34:56.789Z');
    // Across a 29 February: 366 days.
    assert.equal(after('2027-06-01T12:00:00.000Z'), '2028-06-01T12:00:00.000Z');
    assert.equal(after('2028-02-29T08:00:00.000Z'), '2029-02-28T08:00:00.000Z');
    assert.equal(after('2027-02-28T23:59:59.999Z'), '2028-02-28T23:59:59.999Z');
    assert.equal(after('2027-12-31T23:00:00.000Z'), '2028-12-31T23:00:00.000Z');
  });
});
