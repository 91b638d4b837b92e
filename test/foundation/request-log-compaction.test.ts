import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { compactRequestLog } from '../../packages/server/src/request-log/compact-segments.js';
import { queryRequestLog } from '../../packages/server/src/request-log/query-request-log.js';
import { insertRequestLog, type RequestLogEntry } from '../../packages/server/src/request-log/request-log.js';
import type { Database, Queryable } from '../../packages/server/src/db/connection.js';
import { onPostgres, startGateway, type TestGateway } from '../support/gateway.js';

const HOUR = 3_600_000;

describe('request log compaction', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ env: { HERALD_ROLE: 'api' } });
  });
  after(() => gw.close());

  /** Flushes of `size` requests, `count` of them, starting at `start` and 50 ms apart. */
  async function flushes(protocolId: string, start: number, count: number, size: number, first = 0) {
    for (let f = 0; f < count; f++) {
      const batch: RequestLogEntry[] = Array.from({ length: size }, (_, k) => {
        const n = first + f * size + k;
        return { protocolId, method: 'GET', endpoint: `/v1/x/${n % 7}`, statusCode: n % 5 ? 200 : 429, latencyMs: n % 100, at: start + f * 50 + (k % 3) };
      });
      await insertRequestLog(gw.herald.deps.db, batch);
    }
  }
  const segmentsOf = async (protocolId: string) =>
    gw.herald.deps.db.query<{ entries: number; first_at: Date }>(
      `SELECT entries, first_at FROM request_log_segments WHERE protocol_short_id = (SELECT short_id FROM protocols WHERE id = $1) ORDER BY first_at, id`,
      [protocolId],
    );
  async function listing(protocolId: string, filter: { statusCode?: number; endpoint?: string } = {}) {
    const { items, total } = await queryRequestLog(gw.herald.deps.db, { protocolId, page: 1, limit: 100_000, ...filter });
    return { total, items: items.map((r) => [r.endpoint, r.status_code, r.latency_ms, r.created_at.getTime()]) };
  }

  it('merges the small segments of each settled hour, changing nothing a reader sees', async () => {
    const p = await gw.createProtocol();
    const now = Date.parse('2026-03-10T12:30:00.000Z');
    await flushes(p.id, Date.parse('2026-03-10T09:10:00.000Z'), 40, 3);
    await flushes(p.id, Date.parse('2026-03-10T10:59:59.000Z'), 30, 4, 1000); // the last 10 start at 11:00
    await flushes(p.id, Date.parse('2026-03-10T11:40:00.000Z'), 20, 2, 2000); // not settled yet
    const before = [await listing(p.id), await listing(p.id, { statusCode: 429 }), await listing(p.id, { endpoint: '/x/3' })];

    assert.equal(await compactRequestLog(gw.herald.deps.db, new Date(now)), 2);
    const segments = await segmentsOf(p.id);
    assert.deepEqual(
      segments.map((s) => s.entries),
      [120, 80, ...Array(10).fill(4), ...Array(20).fill(2)],
      'one segment for 09:00, one for 10:00; 11:00 (segments by their start) untouched',
    );
    assert.deepEqual([await listing(p.id), await listing(p.id, { statusCode: 429 }), await listing(p.id, { endpoint: '/x/3' })], before);
    assert.equal(await compactRequestLog(gw.herald.deps.db, new Date(now)), 0, 'nothing left to merge');

    // An hour later, 11:00 has settled too.
    assert.equal(await compactRequestLog(gw.herald.deps.db, new Date(now + HOUR)), 1);
    assert.deepEqual(
      (await segmentsOf(p.id)).map((s) => s.entries),
      [120, 80, 80],
    );
    assert.deepEqual([await listing(p.id), await listing(p.id, { statusCode: 429 }), await listing(p.id, { endpoint: '/x/3' })], before);
  });

  it('writes merged segments of about 10,000 requests and leaves large segments alone', async () => {
    const p = await gw.createProtocol();
    await flushes(p.id, Date.parse('2026-03-10T08:00:00.000Z'), 50, 500);
    await insertRequestLog(
      gw.herald.deps.db,
      Array.from({ length: 12_000 }, (_, k) => ({ protocolId: p.id, method: 'POST', endpoint: '/v1/big', statusCode: 202, latencyMs: 1, at: Date.parse('2026-03-10T08:30:00.000Z') + k })),
    );
    const before = await listing(p.id);
    await compactRequestLog(gw.herald.deps.db, new Date('2026-03-10T12:00:00.000Z'));
    const sizes = (await segmentsOf(p.id)).map((s) => s.entries);
    assert.equal(sizes.reduce((a, b) => a + b, 0), 37_000);
    assert.ok(sizes.includes(12_000), `the large segment stays whole: ${sizes}`);
    assert.ok(sizes.length <= 5 && sizes.every((size) => size <= 12_000), `${sizes}`);
    assert.deepEqual(await listing(p.id), before);
  });

  it('merges each segment once when passes run at the same time', async () => {
    const p = await gw.createProtocol();
    await flushes(p.id, Date.parse('2026-03-09T07:00:00.000Z'), 60, 5);
    const before = await listing(p.id);
    const now = new Date('2026-03-10T00:00:00.000Z');
    await Promise.all([compactRequestLog(gw.herald.deps.db, now), compactRequestLog(gw.herald.deps.db, now), compactRequestLog(gw.herald.deps.db, now)]);
    assert.deepEqual(
      (await segmentsOf(p.id)).map((s) => s.entries),
      [300],
    );
    assert.deepEqual(await listing(p.id), before);
  });

  it('reads a page and its total from one snapshot while requests are logged in between (PostgreSQL)', { skip: !onPostgres && 'needs PostgreSQL' }, async () => {
    const p = await gw.createProtocol();
    const start = Date.parse('2026-03-11T08:00:00.000Z');
    await flushes(p.id, start, 4, 5);
    const db = gw.herald.deps.db;
    // After the listing's first read (the total), ten newer requests are logged and committed
    // on another connection before its second read (the page).
    let logged = false;
    const hooked = (q: Queryable): Queryable => ({
      async query<R>(text: string, params?: unknown[]) {
        const rows = await q.query<R>(text, params);
        if (!logged && /AS total/.test(text)) {
          logged = true;
          await flushes(p.id, start + 60_000, 2, 5, 100);
        }
        return rows;
      },
    });
    const between: Database = Object.create(db, {
      query: { value: hooked(db).query },
      transaction: { value: <T>(fn: (tx: Queryable) => Promise<T>) => db.transaction((tx) => fn(hooked(tx))) },
    });
    const { items, total } = await queryRequestLog(between, { protocolId: p.id, page: 1, limit: 100 });
    assert.ok(logged, 'the requests were logged between the two reads');
    assert.equal(total, 20);
    assert.equal(items.length, 20, 'the page holds exactly the requests counted');
    assert.ok(items.every((item) => item.created_at.getTime() < start + 60_000));
    assert.equal((await listing(p.id)).total, 30);
  });
});
