import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { matchesDay, parseCron } from './cron-expression.js';
import { latestOccurrence, nextOccurrence, planCronFire } from './next-run.js';
import { wallClockAt } from './zone-time.js';

const NEW_YORK = 'America/New_York';
const BERLIN = 'Europe/Berlin';

/** The next `count` occurrences after `after`, as ISO strings. */
function occurrences(expression: string, zone: string, after: string, count: number): string[] {
  const spec = parseCron(expression);
  const out: string[] = [];
  let cursor = new Date(after);
  for (let i = 0; i < count; i++) {
    cursor = nextOccurrence(spec, zone, cursor)!;
    out.push(cursor.toISOString());
  }
  return out;
}

describe('nextOccurrence', () => {
  it('runs in the zone and keeps local wall-clock time across DST', () => {
    // 09:00 New York: 14:00Z in winter, 13:00Z from 8 March 2026.
    assert.deepEqual(occurrences('0 9 * * *', NEW_YORK, '2026-03-06T15:00:00Z', 3), [
      '2026-03-07T14:00:00.000Z',
      '2026-03-08T13:00:00.000Z',
      '2026-03-09T13:00:00.000Z',
    ]);
    assert.deepEqual(occurrences('0 9 * * *', BERLIN, '2026-10-24T08:00:00Z', 2), ['2026-10-25T08:00:00.000Z', '2026-10-26T08:00:00.000Z']);
  });

  it('is strictly after the given instant', () => {
    const spec = parseCron('0 9 * * *');
    assert.equal(nextOccurrence(spec, 'UTC', new Date('2026-06-01T09:00:00Z'))!.toISOString(), '2026-06-02T09:00:00.000Z');
    assert.equal(nextOccurrence(spec, 'UTC', new Date('2026-06-01T08:59:59.999Z'))!.toISOString(), '2026-06-01T09:00:00.000Z');
  });

  it('America/New_York spring-forward: a 02:30 job runs at 03:00 EDT that day', () => {
    assert.deepEqual(occurrences('30 2 * * *', NEW_YORK, '2026-03-07T00:00:00Z', 3), [
      '2026-03-07T07:30:00.000Z', // 02:30 EST
      '2026-03-08T07:00:00.000Z', // 02:30 does not exist: 03:00 EDT
      '2026-03-09T06:30:00.000Z', // 02:30 EDT
    ]);
  });

  it('Europe/Berlin spring-forward: a 02:30 job runs at 03:00 CEST that day', () => {
    assert.deepEqual(occurrences('30 2 * * *', BERLIN, '2026-03-28T00:00:00Z', 3), [
      '2026-03-28T01:30:00.000Z',
      '2026-03-29T01:00:00.000Z',
      '2026-03-30T00:30:00.000Z',
    ]);
  });

  it('collapses the skipped times of a gap into one run at its end', () => {
    // Every 15 minutes: 02:00, 02:15, 02:30, 02:45 and 03:00 EDT are one run at 07:00Z.
    assert.deepEqual(occurrences('*/15 * * * *', NEW_YORK, '2026-03-08T06:30:00Z', 4), [
      '2026-03-08T06:45:00.000Z',
      '2026-03-08T07:00:00.000Z',
      '2026-03-08T07:15:00.000Z',
      '2026-03-08T07:30:00.000Z',
    ]);
  });

  it('America/New_York fall-back: a 01:30 job runs once, at the first 01:30 (EDT)', () => {
    assert.deepEqual(occurrences('30 1 * * *', NEW_YORK, '2026-10-31T00:00:00Z', 3), [
      '2026-10-31T05:30:00.000Z',
      '2026-11-01T05:30:00.000Z', // 01:30 EDT; the 01:30 EST an hour later does not run
      '2026-11-02T06:30:00.000Z',
    ]);
  });

  it('Europe/Berlin fall-back: a 02:30 job runs once, at the first 02:30 (CEST)', () => {
    assert.deepEqual(occurrences('30 2 * * *', BERLIN, '2026-10-24T00:00:00Z', 3), [
      '2026-10-24T00:30:00.000Z',
      '2026-10-25T00:30:00.000Z',
      '2026-10-26T01:30:00.000Z',
    ]);
  });

  it('gives the repeated hour no runs of its own', () => {
    // Hourly at :00 around New York's fall-back: 01:00 EDT, then 02:00 EST (01:00 EST is a repeat).
    assert.deepEqual(occurrences('0 * * * *', NEW_YORK, '2026-11-01T04:30:00Z', 3), [
      '2026-11-01T05:00:00.000Z',
      '2026-11-01T07:00:00.000Z',
      '2026-11-01T08:00:00.000Z',
    ]);
    // Called from inside the repeated hour, it does not go back to the first instance.
    assert.equal(nextOccurrence(parseCron('45 1 * * *'), NEW_YORK, new Date('2026-11-01T06:10:00Z'))!.toISOString(), '2026-11-02T06:45:00.000Z');
  });

  it('finds rare days: 29 February, the 13th or a Friday, last days of months', () => {
    assert.deepEqual(occurrences('0 0 29 2 *', 'UTC', '2026-01-01T00:00:00Z', 2), ['2028-02-29T00:00:00.000Z', '2032-02-29T00:00:00.000Z']);
    assert.deepEqual(occurrences('0 12 13 * FRI', 'UTC', '2026-02-10T00:00:00Z', 3), [
      '2026-02-13T12:00:00.000Z', // Friday the 13th
      '2026-02-20T12:00:00.000Z',
      '2026-02-27T12:00:00.000Z',
    ]);
    assert.deepEqual(occurrences('0 0 31 * *', 'UTC', '2026-01-31T00:00:00Z', 2), ['2026-03-31T00:00:00.000Z', '2026-05-31T00:00:00.000Z']);
  });
});

describe('latestOccurrence', () => {
  it('is the last occurrence at or before the instant', () => {
    const spec = parseCron('*/5 * * * *');
    assert.equal(latestOccurrence(spec, 'UTC', new Date('2026-06-01T10:04:59Z'))!.toISOString(), '2026-06-01T10:00:00.000Z');
    assert.equal(latestOccurrence(spec, 'UTC', new Date('2026-06-01T10:05:00Z'))!.toISOString(), '2026-06-01T10:05:00.000Z');
    assert.equal(latestOccurrence(parseCron('0 9 * * MON'), NEW_YORK, new Date('2026-06-03T00:00:00Z'))!.toISOString(), '2026-06-01T13:00:00.000Z');
  });

  it('sees first-instance runs from inside the repeated hour', () => {
    // 06:15Z is 01:15 EST (the second 01:15); 01:50 EDT (05:50Z) was the last run.
    assert.equal(latestOccurrence(parseCron('*/10 * * * *'), NEW_YORK, new Date('2026-11-01T06:15:00Z'))!.toISOString(), '2026-11-01T05:50:00.000Z');
  });

  it('sees a gap-end run', () => {
    assert.equal(latestOccurrence(parseCron('30 2 * * *'), NEW_YORK, new Date('2026-03-08T07:30:00Z'))!.toISOString(), '2026-03-08T07:00:00.000Z');
  });
});

describe('planCronFire', () => {
  const every5 = parseCron('*/5 * * * *');

  it('fires the due occurrence and computes the next one from it, not from now', () => {
    const plan = planCronFire(every5, 'UTC', new Date('2026-06-01T10:00:00Z'), new Date('2026-06-01T10:00:40Z'));
    assert.equal(plan.occurrence.toISOString(), '2026-06-01T10:00:00.000Z');
    assert.equal(plan.next!.toISOString(), '2026-06-01T10:05:00.000Z');
    assert.equal(plan.skipped, false);
  });

  it('after downtime fires only the latest missed occurrence and jumps past now', () => {
    const plan = planCronFire(every5, 'UTC', new Date('2026-06-01T10:00:00Z'), new Date('2026-06-01T13:03:10Z'));
    assert.equal(plan.occurrence.toISOString(), '2026-06-01T13:00:00.000Z');
    assert.equal(plan.next!.toISOString(), '2026-06-01T13:05:00.000Z');
    assert.equal(plan.skipped, true);
  });

  it('a worker late by less than one period fires the due occurrence', () => {
    const daily = parseCron('0 9 * * *');
    const plan = planCronFire(daily, NEW_YORK, new Date('2026-06-01T13:00:00Z'), new Date('2026-06-01T20:00:00Z'));
    assert.equal(plan.occurrence.toISOString(), '2026-06-01T13:00:00.000Z');
    assert.equal(plan.next!.toISOString(), '2026-06-02T13:00:00.000Z');
  });
});

describe('occurrence properties (random instants, zones and expressions)', () => {
  const zones = ['UTC', NEW_YORK, BERLIN, 'Australia/Lord_Howe', 'Asia/Kolkata', 'America/Sao_Paulo', 'Pacific/Chatham'];
  const expression = fc
    .tuple(
      fc.constantFrom('*', '0', '*/15', '30', '0,45', '5-10'),
      fc.constantFrom('*', '2', '1-3', '*/6', '0,12', '23'),
      fc.constantFrom('*', '1', '15', '*/10', '28-31'),
      fc.constantFrom('*', '3', '10,11', '*/4'),
      fc.constantFrom('*', '0', '1-5', 'SAT'),
    )
    .map((fields) => fields.join(' '));
  const instant = fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2035, 0, 1) }).map((ms) => new Date(ms));

  it('next is after, nothing lies between, and next is itself an occurrence', () => {
    fc.assert(
      fc.property(expression, fc.constantFrom(...zones), instant, (text, zone, after) => {
        const spec = parseCron(text);
        const next = nextOccurrence(spec, zone, after)!;
        assert.ok(next > after);
        const before = latestOccurrence(spec, zone, new Date(next.getTime() - 1));
        assert.ok(!before || before <= after, `${text} ${zone} ${after.toISOString()}: ${before?.toISOString()} between`);
        assert.equal(latestOccurrence(spec, zone, next)!.getTime(), next.getTime());
        // Its wall clock matches the expression, unless it is the end of a gap.
        const local = new Date(wallClockAt(next, zone));
        const gapEnd = wallClockAt(next, zone) - wallClockAt(new Date(next.getTime() - 1), zone) !== 1;
        const matches =
          matchesDay(spec, local.getUTCMonth() + 1, local.getUTCDate(), local.getUTCDay()) &&
          spec.hours.includes(local.getUTCHours()) &&
          spec.minutes.includes(local.getUTCMinutes());
        assert.ok(matches || gapEnd, `${text} ${zone}: ${next.toISOString()} does not match`);
      }),
      { numRuns: 300 },
    );
  });
});
