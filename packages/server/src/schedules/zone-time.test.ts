import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalTimeZone, formatInstant, formatWallClock, instantOfWallClock, parseWallClock, wallClockAt } from './zone-time.js';

const at = (text: string, zone: string) => instantOfWallClock(parseWallClock(text)!, zone).toISOString();

describe('canonicalTimeZone', () => {
  it('accepts IANA names in any case and answers the canonical spelling', () => {
    assert.equal(canonicalTimeZone('America/New_York'), 'America/New_York');
    assert.equal(canonicalTimeZone('america/new_york'), 'America/New_York');
    assert.equal(canonicalTimeZone('UTC'), 'UTC');
    assert.equal(canonicalTimeZone('utc'), 'UTC');
    assert.equal(canonicalTimeZone('Etc/GMT+5'), 'Etc/GMT+5');
    assert.equal(canonicalTimeZone('Asia/Kolkata'), 'Asia/Kolkata');
    assert.equal(canonicalTimeZone('US/Eastern'), 'US/Eastern');
  });

  it('refuses unknown zones and fixed offsets', () => {
    for (const name of ['Mars/Base', 'America/NewYork', '', '+03:00', 'UTC+3', 'GMT+0300', '../etc/passwd', ' UTC']) {
      assert.equal(canonicalTimeZone(name), undefined, name);
    }
  });
});

describe('parseWallClock', () => {
  it('keeps the date and time fields and ignores any offset', () => {
    const nine = Date.UTC(2026, 5, 1, 9, 0, 0);
    for (const text of ['2026-06-01T09:00:00Z', '2026-06-01T09:00:00', '2026-06-01T09:00', '2026-06-01T09:00:00+05:00', '2026-06-01 09:00:00-0300', '2026-06-01t09:00:00z']) {
      assert.equal(parseWallClock(text), nine, text);
    }
    assert.equal(parseWallClock('2026-06-01T09:00:05.25Z'), nine + 5250);
    assert.equal(parseWallClock('2028-02-29T00:00:00'), Date.UTC(2028, 1, 29));
  });

  it('takes years 0000–0099 as written, not as 1900–1999', () => {
    assert.equal(new Date(parseWallClock('0050-01-01T00:00:00')!).toISOString(), '0050-01-01T00:00:00.000Z');
    assert.equal(new Date(parseWallClock('0000-02-29T12:30:00')!).toISOString(), '0000-02-29T12:30:00.000Z');
  });

  it('refuses what is not an ISO 8601 date-time or does not exist', () => {
    for (const text of ['2026-06-01', '09:00', 'tomorrow', '2026-6-1T09:00:00Z', '2026-02-30T09:00:00Z', '2027-02-29T00:00:00', '2026-13-01T00:00:00', '2026-06-01T24:00:00', '2026-06-01T09:60:00', '2026-06-01T09:00:60', '0050-02-29T00:00:00', '2026-06-01T09:00:00+5', '1780000000']) {
      assert.equal(parseWallClock(text), undefined, text);
    }
  });

  it('formats local milliseconds without an offset', () => {
    assert.equal(formatWallClock(Date.UTC(2026, 5, 1, 9)), '2026-06-01T09:00:00');
    assert.equal(formatWallClock(Date.UTC(2026, 5, 1, 9, 0, 1, 250)), '2026-06-01T09:00:01.250');
  });

  it('formats instants with milliseconds only when there are any', () => {
    assert.equal(formatInstant(new Date('2026-06-01T13:00:00Z')), '2026-06-01T13:00:00Z');
    assert.equal(formatInstant(new Date('2026-06-01T13:00:00.5Z')), '2026-06-01T13:00:00.500Z');
  });
});

describe('instantOfWallClock', () => {
  it('takes the wall clock in the zone (the contract example)', () => {
    assert.equal(at('2026-06-01T09:00:00Z', 'America/New_York'), '2026-06-01T13:00:00.000Z');
    assert.equal(at('2026-01-15T09:00:00Z', 'America/New_York'), '2026-01-15T14:00:00.000Z');
    assert.equal(at('2026-06-01T09:00:00Z', 'UTC'), '2026-06-01T09:00:00.000Z');
    assert.equal(at('2026-06-01T09:00:00Z', 'Asia/Kolkata'), '2026-06-01T03:30:00.000Z');
    assert.equal(at('2026-06-01T09:00:00Z', 'Europe/Berlin'), '2026-06-01T07:00:00.000Z');
  });

  it('resolves a time inside a spring-forward gap to the end of the gap', () => {
    // America/New_York, 8 March 2026: 02:00 EST jumps to 03:00 EDT (07:00Z).
    assert.equal(at('2026-03-08T02:30:00', 'America/New_York'), '2026-03-08T07:00:00.000Z');
    assert.equal(at('2026-03-08T02:00:00', 'America/New_York'), '2026-03-08T07:00:00.000Z');
    assert.equal(at('2026-03-08T02:59:59.999', 'America/New_York'), '2026-03-08T07:00:00.000Z');
    assert.equal(at('2026-03-08T01:59:00', 'America/New_York'), '2026-03-08T06:59:00.000Z');
    assert.equal(at('2026-03-08T03:00:00', 'America/New_York'), '2026-03-08T07:00:00.000Z');
    // Europe/Berlin, 29 March 2026: 02:00 CET jumps to 03:00 CEST (01:00Z).
    assert.equal(at('2026-03-29T02:30:00', 'Europe/Berlin'), '2026-03-29T01:00:00.000Z');
    // Lord Howe moves by 30 minutes: 02:00 +10:30 becomes 02:30 +11:00.
    assert.equal(at('2026-10-04T02:15:00', 'Australia/Lord_Howe'), '2026-10-03T15:30:00.000Z');
    // Samoa skipped the whole of 30 December 2011.
    assert.equal(at('2011-12-30T12:00:00', 'Pacific/Apia'), '2011-12-30T10:00:00.000Z');
  });

  it('resolves a time repeated by fall-back to its first instance', () => {
    // America/New_York, 1 November 2026: 02:00 EDT falls back to 01:00 EST; 01:30 happens twice.
    assert.equal(at('2026-11-01T01:30:00', 'America/New_York'), '2026-11-01T05:30:00.000Z');
    assert.equal(at('2026-11-01T00:59:00', 'America/New_York'), '2026-11-01T04:59:00.000Z');
    assert.equal(at('2026-11-01T02:00:00', 'America/New_York'), '2026-11-01T07:00:00.000Z');
    // Europe/Berlin, 25 October 2026: 03:00 CEST falls back to 02:00 CET; 02:30 happens twice.
    assert.equal(at('2026-10-25T02:30:00', 'Europe/Berlin'), '2026-10-25T00:30:00.000Z');
    assert.equal(at('2026-10-25T03:00:00', 'Europe/Berlin'), '2026-10-25T02:00:00.000Z');
  });

  it('is the inverse of wallClockAt outside gaps and overlaps', () => {
    for (const iso of ['2026-06-01T13:00:00.000Z', '2026-01-01T00:00:00.000Z', '2026-11-01T04:00:00.000Z', '2026-03-08T08:00:00.000Z']) {
      for (const zone of ['America/New_York', 'Europe/Berlin', 'Asia/Kolkata', 'Pacific/Chatham', 'UTC']) {
        assert.equal(instantOfWallClock(wallClockAt(new Date(iso), zone), zone).toISOString(), iso, `${iso} ${zone}`);
      }
    }
  });

  it('reads the second instance of a repeated hour as the earlier wall clock', () => {
    // 06:30Z on 1 November 2026 is 01:30 EST, the second 01:30.
    assert.equal(formatWallClock(wallClockAt(new Date('2026-11-01T06:30:00Z'), 'America/New_York')), '2026-11-01T01:30:00');
  });
});
