import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { periodOf, periodStartDate } from './quota.js';

describe('periodOf', () => {
  const cases: [string, string, string][] = [
    ['2026-03-15T12:00:00.000Z', '2026-03-01T00:00:00.000Z', '2026-04-01T00:00:00.000Z'],
    ['2026-03-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z', '2026-04-01T00:00:00.000Z'],
    ['2026-03-31T23:59:59.999Z', '2026-03-01T00:00:00.000Z', '2026-04-01T00:00:00.000Z'],
    ['2026-12-31T23:59:59.999Z', '2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
    ['2028-02-29T08:00:00.000Z', '2028-02-01T00:00:00.000Z', '2028-03-01T00:00:00.000Z'],
  ];
  for (const [now, start, next] of cases) {
    it(`puts ${now} in the UTC month starting ${start.slice(0, 10)}`, () => {
      const period = periodOf(new Date(now));
      assert.equal(period.start.toISOString(), start);
      assert.equal(period.next.toISOString(), next);
    });
  }

  it('follows UTC, not the local zone: 23:30 on the 31st in New York is already next month', () => {
    assert.equal(periodOf(new Date('2026-01-31T23:30:00-05:00')).start.toISOString(), '2026-02-01T00:00:00.000Z');
  });
});

describe('periodStartDate', () => {
  it('answers each instant with its own month, whichever month was asked before (last and first milliseconds, back and forth)', () => {
    const asked = [
      ['2026-03-15T12:00:00.000Z', '2026-03-01'],
      ['2026-03-31T23:59:59.999Z', '2026-03-01'],
      ['2026-04-01T00:00:00.000Z', '2026-04-01'],
      ['2026-03-31T23:59:59.999Z', '2026-03-01'],
      ['2026-03-01T00:00:00.000Z', '2026-03-01'],
      ['2026-02-28T23:59:59.999Z', '2026-02-01'],
      ['2026-12-31T23:59:59.999Z', '2026-12-01'],
      ['2027-01-01T00:00:00.000Z', '2027-01-01'],
      ['2026-01-31T23:30:00-05:00', '2026-02-01'],
    ];
    for (const [now, day] of asked) assert.equal(periodStartDate(new Date(now)), day, now);
  });
});
