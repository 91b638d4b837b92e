import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lastDays, parseDateRange, periodStart, RangeProblem, rate } from './report-range.js';

const NOW = new Date('2025-06-15T12:00:00Z');
const iso = (r: { start: Date; end: Date }) => [r.start.toISOString(), r.end.toISOString()];

describe('report ranges', () => {
  it('ends periods with the current hour', () => {
    assert.equal(periodStart('7d', new Date('2025-06-15T12:34:56Z')).toISOString(), '2025-06-08T13:00:00.000Z');
    assert.equal(periodStart('90d', NOW).toISOString(), '2025-03-17T13:00:00.000Z');
  });

  it('reads dates as whole UTC days, the end day included, and widens date-times to the hour', () => {
    assert.deepEqual(iso(parseDateRange('2025-03-01', '2025-03-31', NOW)), ['2025-03-01T00:00:00.000Z', '2025-04-01T00:00:00.000Z']);
    assert.deepEqual(iso(parseDateRange('2024-02-29', '2024-02-29', NOW)), ['2024-02-29T00:00:00.000Z', '2024-03-01T00:00:00.000Z']);
    assert.deepEqual(iso(parseDateRange('2025-03-01T10:30:00+02:00', '2025-03-02T00:00:01Z', NOW)), ['2025-03-01T08:00:00.000Z', '2025-03-02T01:00:00.000Z']);
    // The end's hour is included whatever the minute: an end on the hour does not empty the range.
    assert.deepEqual(iso(parseDateRange('2025-03-01T10:00:00Z', '2025-03-01T10:00:00Z', NOW)), ['2025-03-01T10:00:00.000Z', '2025-03-01T11:00:00.000Z']);
    assert.deepEqual(iso(parseDateRange('2025-03-01', '2025-03-01T00:00:00Z', NOW)), ['2025-03-01T00:00:00.000Z', '2025-03-01T01:00:00.000Z']);
    assert.deepEqual(iso(parseDateRange('2025-03-01T09:59:59Z', '2025-03-01T10:59:59.999Z', NOW)), ['2025-03-01T09:00:00.000Z', '2025-03-01T11:00:00.000Z']);
    // A date ends with its day: a start later that day is not after the end.
    assert.deepEqual(iso(parseDateRange('2025-03-01T05:00:00Z', '2025-03-01', NOW)), ['2025-03-01T05:00:00.000Z', '2025-03-02T00:00:00.000Z']);
    assert.deepEqual(iso(parseDateRange('2025-03-01T23:59:59.999Z', '2025-03-01', NOW)), ['2025-03-01T23:00:00.000Z', '2025-03-02T00:00:00.000Z']);
    assert.deepEqual(iso(parseDateRange('2025-03-01T10:00:00+05:00', '2025-03-01', NOW)), ['2025-03-01T05:00:00.000Z', '2025-03-02T00:00:00.000Z']);
  });

  it('takes every year from 1970 to 9999 as written, and refuses earlier ones', () => {
    assert.deepEqual(iso(parseDateRange('1970-01-01', '1999-12-31', NOW)), ['1970-01-01T00:00:00.000Z', '2000-01-01T00:00:00.000Z']);
    // The database has no year 0 and reads years 1 to 99 in another century.
    for (const [start, end] of [
      ['0000-01-01', undefined],
      ['0001-01-01', '0099-12-31'],
      ['1969-12-31T23:59:59Z', undefined],
      ['0001-01-01T00:00:00+01:00', undefined],
      [undefined, '1970-01-15'], // the default start, 30 days before, is in 1969
    ]) {
      assert.throws(() => parseDateRange(start, end, NOW), RangeProblem, `${start} ${end}`);
    }
    assert.deepEqual(iso(parseDateRange('9999-01-01', '9999-12-30', NOW)), ['9999-01-01T00:00:00.000Z', '9999-12-31T00:00:00.000Z']);
    // 9999-12-31 would end the range in the year 10000, which an ISO 8601 instant cannot state.
    assert.throws(() => parseDateRange('9999-01-01', '9999-12-31', NOW), RangeProblem);
  });

  it('defaults to the 30 days up to the current hour, or before the end given', () => {
    assert.deepEqual(iso(parseDateRange(undefined, undefined, new Date('2025-06-15T12:34:00Z'))), ['2025-05-16T13:00:00.000Z', '2025-06-15T13:00:00.000Z']);
    assert.deepEqual(iso(parseDateRange(undefined, '2025-01-31', NOW)), ['2025-01-02T00:00:00.000Z', '2025-02-01T00:00:00.000Z']);
    assert.deepEqual(iso(parseDateRange('2025-06-01', undefined, NOW)), ['2025-06-01T00:00:00.000Z', '2025-06-15T13:00:00.000Z']);
  });

  it('refuses impossible dates, other formats and an end before the start', () => {
    for (const [start, end] of [
      ['2025-02-29', undefined],
      ['2025-04-31', undefined],
      ['2025-3-1', undefined],
      ['20250301', undefined],
      ['2025-03-01T10:00', undefined],
      ['2025-02-29T00:00:00Z', undefined],
      [undefined, '2025-11-31T12:00:00Z'],
      ['2025-03-01T24:00:00Z', undefined],
      ['tomorrow', undefined],
      [undefined, '2025-13-01'],
      ['2025-03-02', '2025-03-01'],
      ['2025-03-01T00:00:01Z', '2025-03-01T00:00:00Z'],
      ['2025-03-02T00:00:00Z', '2025-03-01'],
      ['2025-06-15T13:00:00Z', undefined],
    ]) {
      assert.throws(() => parseDateRange(start, end, NOW), RangeProblem, `${start} ${end}`);
    }
  });

  it('lists the last days oldest first, today included', () => {
    const days = lastDays(new Date('2025-03-02T23:59:59Z'), 3);
    assert.deepEqual(days, ['2025-02-28', '2025-03-01', '2025-03-02']);
  });

  it('rates are 0 without a denominator', () => {
    assert.equal(rate(0, 0), 0);
    assert.equal(rate(1, 4), 0.25);
  });
});
