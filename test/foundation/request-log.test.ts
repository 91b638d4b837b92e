import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { queryRequestLog } from '../../packages/server/src/request-log/query-request-log.js';
import { insertRequestLog, type RequestLogEntry } from '../../packages/server/src/request-log/request-log.js';
import { call, isErrorBody, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('request log', () => {
  let gw: TestGateway;
  let acme: TestProtocol;

  before(async () => {
    gw = await startGateway({ env: { HERALD_IP_RATE_LIMIT: '1000' } });
    acme = await gw.createProtocol({ tier: 3 });
  });
  after(() => gw.close());

  const logOf = (key: string, query = '') => call(gw.url, key, 'GET', `/v1/requests${query}`);

  it('records every authenticated request, newest first, with method, path, status, latency and time', async () => {
    const started = Date.now();
    await call(gw.url, acme.apiKey, 'GET', '/v1/usage?verbose=1&x=%25');
    await call(gw.url, acme.sandboxApiKey, 'GET', '/v1/protocols/me');
    await call(gw.url, acme.apiKey, 'GET', '/v1/requests?limit=0');
    await call(gw.url, acme.apiKey, 'GET', '/v1/usage');
    const res = await logOf(acme.apiKey);
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['items', 'page', 'total']);
    const mine = res.body.items.filter((item: any) => item.endpoint !== '/v1/requests' || item.statusCode === 400);
    assert.deepEqual(
      mine.map((item: any) => [item.method, item.endpoint, item.statusCode]),
      [
        ['GET', '/v1/usage', 200],
        ['GET', '/v1/requests', 400],
        ['GET', '/v1/protocols/me', 200],
        ['GET', '/v1/usage', 200],
      ],
    );
    for (const item of res.body.items) {
      assert.deepEqual(Object.keys(item).sort(), ['endpoint', 'latencyMs', 'method', 'statusCode', 'timestamp']);
      assert.ok(Number.isInteger(item.latencyMs) && item.latencyMs >= 0, `latencyMs ${item.latencyMs}`);
      assert.match(item.timestamp, ISO);
      assert.ok(Date.parse(item.timestamp) >= started - 1000 && Date.parse(item.timestamp) <= Date.now() + 1000);
    }
    const times = res.body.items.map((item: any) => Date.parse(item.timestamp));
    assert.deepEqual(times, [...times].sort((a, b) => b - a), 'newest first');
  });

  it('filters by status code and by a literal endpoint substring', async () => {
    const p = await gw.createProtocol({ tier: 3 });
    await call(gw.url, p.apiKey, 'GET', '/v1/usage');
    await call(gw.url, p.apiKey, 'GET', '/v1/usage');
    await call(gw.url, p.apiKey, 'GET', '/v1/protocols/me');
    await call(gw.url, p.apiKey, 'GET', '/v1/requests?page=0');

    const bad = await logOf(p.apiKey, '?statusCode=400');
    assert.equal(bad.body.total, 1);
    assert.deepEqual(
      bad.body.items.map((i: any) => [i.endpoint, i.statusCode]),
      [['/v1/requests', 400]],
    );
    const usage = await logOf(p.apiKey, '?endpoint=usage');
    assert.equal(usage.body.total, 2);
    assert.ok(usage.body.items.every((i: any) => i.endpoint === '/v1/usage'));
    const both = await logOf(p.apiKey, '?endpoint=%2Fv1%2Fusage&statusCode=200');
    assert.equal(both.body.total, 2);
    assert.equal((await logOf(p.apiKey, '?statusCode=404')).body.total, 0);
    // An empty filter is refused, as an empty statusCode is, rather than read as "any endpoint".
    for (const query of ['?endpoint=', '?statusCode=']) {
      const empty = await logOf(p.apiKey, query);
      assert.equal(empty.status, 400, query);
      assert.equal(empty.body.code, 'VALIDATION_ERROR');
    }

    // LIKE wildcards in the filter are plain characters: none of the recorded paths holds them.
    for (const pattern of ['%25', '_', '%2Fv1%2Fu_age', '%25usage']) {
      const res = await logOf(p.apiKey, `?endpoint=${pattern}`);
      assert.equal(res.status, 200);
      assert.equal(res.body.total, 0, `endpoint=${decodeURIComponent(pattern)} matched ${JSON.stringify(res.body.items)}`);
    }
    // …and they match where a path really contains them.
    const at = Date.now();
    await insertRequestLog(gw.herald.deps.db, [
      { protocolId: p.id, method: 'GET', endpoint: '/v1/templates/a%25b', statusCode: 404, latencyMs: 1, at },
      { protocolId: p.id, method: 'GET', endpoint: '/v1/templates/a_b', statusCode: 404, latencyMs: 1, at },
    ]);
    assert.deepEqual(
      (await logOf(p.apiKey, '?endpoint=%25')).body.items.map((i: any) => i.endpoint),
      ['/v1/templates/a%25b'],
    );
    assert.deepEqual(
      (await logOf(p.apiKey, '?endpoint=a_b')).body.items.map((i: any) => i.endpoint),
      ['/v1/templates/a_b'],
    );
  });

  it('stores paths that an array literal must quote exactly as they were, in their own segments and in shared ones', async () => {
    const p = await gw.createProtocol({ tier: 3 });
    const q = await gw.createProtocol({ tier: 3 });
    const awkward = ['/v1/a,b', '/v1/{x}', '/v1/"quoted"', '/v1/back\\slash', 'NULL', 'null', '', '/v1/two words', '/v1/tab\there', '/v1/ünïcode', '/v1/plain'];
    const at = Date.now();
    // One batch: both protocols' segments are written by one statement.
    await insertRequestLog(gw.herald.deps.db, [
      ...awkward.map((endpoint, i) => ({ protocolId: p.id, method: 'GET', endpoint, statusCode: 200 + i, latencyMs: i, at: at + i })),
      { protocolId: q.id, method: 'DELETE', endpoint: '/v1/plain', statusCode: 204, latencyMs: 0, at },
    ]);
    const res = await logOf(p.apiKey, '?limit=100');
    assert.deepEqual(
      res.body.items.map((i: any) => [i.endpoint, i.statusCode, i.latencyMs]),
      awkward.map((endpoint, i) => [endpoint, 200 + i, i]).reverse(),
    );
    assert.equal(res.body.total, awkward.length);
    assert.deepEqual((await logOf(p.apiKey, `?endpoint=${encodeURIComponent('"quoted"')}`)).body.items.map((i: any) => i.endpoint), ['/v1/"quoted"']);
    assert.deepEqual((await logOf(p.apiKey, '?statusCode=204')).body.items.map((i: any) => i.endpoint), ['NULL']);
    const other = (await logOf(q.apiKey)).body.items.filter((i: any) => i.endpoint !== '/v1/requests');
    assert.deepEqual(other.map((i: any) => [i.method, i.endpoint, i.statusCode]), [['DELETE', '/v1/plain', 204]]);
    // And through the gateway's own recorder: a request path with a comma, which an array literal quotes.
    await call(gw.url, p.apiKey, 'GET', '/v1/notifications/a,b%22c%5C{d}');
    const recorded = (await logOf(p.apiKey, '?limit=1&statusCode=404')).body.items;
    assert.deepEqual(recorded.map((i: any) => i.endpoint), ['/v1/notifications/a,b%22c%5C%7Bd%7D']);
  });

  it('pages with page and limit (defaults 1 and 50), newest first across pages', async () => {
    const p = await gw.createProtocol({ tier: 3 });
    const base = Date.parse('2026-01-01T00:00:00.000Z');
    const rows: RequestLogEntry[] = Array.from({ length: 60 }, (_, i) => ({
      protocolId: p.id,
      method: 'POST',
      endpoint: `/v1/notifications/n${i}`,
      statusCode: 202,
      latencyMs: i,
      at: base + i * 1000,
    }));
    await insertRequestLog(gw.herald.deps.db, rows);

    const first = await logOf(p.apiKey, '?endpoint=notifications');
    assert.equal(first.body.page, 1);
    assert.equal(first.body.total, 60);
    assert.equal(first.body.items.length, 50);
    assert.equal(first.body.items[0].endpoint, '/v1/notifications/n59');
    assert.equal(first.body.items[0].timestamp, new Date(base + 59_000).toISOString());
    assert.equal(first.body.items[49].endpoint, '/v1/notifications/n10');

    const page2 = await logOf(p.apiKey, '?endpoint=notifications&page=2&limit=25');
    assert.equal(page2.body.page, 2);
    assert.equal(page2.body.total, 60);
    assert.deepEqual(
      page2.body.items.map((i: any) => i.endpoint),
      Array.from({ length: 25 }, (_, i) => `/v1/notifications/n${34 - i}`),
    );
    const last = await logOf(p.apiKey, '?endpoint=notifications&page=3&limit=25');
    assert.equal(last.body.items.length, 10);
    const beyond = await logOf(p.apiKey, '?endpoint=notifications&page=9&limit=100');
    assert.equal(beyond.status, 200);
    assert.deepEqual(beyond.body.items, []);
    assert.equal(beyond.body.total, 60);
    assert.equal((await logOf(p.apiKey, '?endpoint=notifications&limit=100')).body.items.length, 60);
  });

  it('pages exactly across segments of several processes whose times overlap, ties included', async () => {
    const p = await gw.createProtocol({ tier: 3 });
    const base = Date.parse('2026-02-01T00:00:00.000Z');
    // Three "processes" flush their own segments; their requests interleave in time, and some
    // share a millisecond. Segment sizes differ so that page boundaries fall inside segments.
    const entry = (n: number, at: number): RequestLogEntry => ({
      protocolId: p.id,
      method: n % 3 === 0 ? 'POST' : 'GET',
      endpoint: `/v1/notifications/x${n}`,
      statusCode: n % 4 === 0 ? 404 : 200,
      latencyMs: n,
      at,
    });
    const flushes: RequestLogEntry[][] = [];
    let n = 0;
    for (let round = 0; round < 6; round++) {
      for (let process = 0; process < 3; process++) {
        const size = 1 + ((round * 3 + process) % 7);
        flushes.push(Array.from({ length: size }, (_, k) => entry(n++, base + round * 1000 + process * 150 + k * 100)));
      }
    }
    for (const batch of flushes) await insertRequestLog(gw.herald.deps.db, batch);
    const all = flushes.flat();
    // Newest first; within a millisecond the later segment first, then the later position in it.
    const expected = all
      .map((e, i) => ({ e, i }))
      .sort((a, b) => b.e.at - a.e.at || b.i - a.i)
      .map(({ e }) => e.endpoint);

    // Read directly: reading over HTTP would add requests of its own to this protocol's log.
    for (const limit of [1, 4, 7, 25, 100]) {
      const pages = Math.ceil(all.length / limit) + 1;
      const seen: string[] = [];
      for (let page = 1; page <= pages; page++) {
        const { items, total } = await queryRequestLog(gw.herald.deps.db, { protocolId: p.id, page, limit });
        assert.equal(total, all.length);
        seen.push(...items.map((item) => item.endpoint));
      }
      assert.deepEqual(seen, expected, `limit ${limit}`);
    }
    const number = (endpoint: string) => Number(endpoint.slice('/v1/notifications/x'.length));
    const filters: [Partial<Pick<RequestLogEntry, 'statusCode' | 'endpoint'>>, (endpoint: string) => boolean][] = [
      [{ statusCode: 404 }, (endpoint) => number(endpoint) % 4 === 0],
      [{ endpoint: 'x1' }, (endpoint) => endpoint.includes('x1')],
      [{ statusCode: 200, endpoint: 'x2' }, (endpoint) => number(endpoint) % 4 !== 0 && endpoint.includes('x2')],
    ];
    for (const [filter, matches] of filters) {
      const wanted = expected.filter(matches);
      for (const limit of [1, 3, 10]) {
        const seen: string[] = [];
        for (let page = 1; page <= Math.ceil(wanted.length / limit) + 1; page++) {
          const { items, total } = await queryRequestLog(gw.herald.deps.db, { protocolId: p.id, page, limit, ...filter });
          assert.equal(total, wanted.length, JSON.stringify(filter));
          seen.push(...items.map((item) => item.endpoint));
        }
        assert.deepEqual(seen, wanted, `${JSON.stringify(filter)}, limit ${limit}`);
      }
    }
    const notFound = await logOf(p.apiKey, '?statusCode=404&limit=5&page=2');
    assert.deepEqual(
      notFound.body.items.map((i: any) => i.endpoint),
      expected.filter((endpoint) => number(endpoint) % 4 === 0).slice(5, 10),
    );
  });

  it('refuses bad pagination and filters with 400 VALIDATION_ERROR naming the parameter', async () => {
    const cases: [string, string][] = [
      ['page=0', 'page'],
      ['page=-1', 'page'],
      ['page=abc', 'page'],
      ['page=1.5', 'page'],
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=abc', 'limit'],
      ['statusCode=abc', 'statusCode'],
      ['statusCode=99', 'statusCode'],
    ];
    for (const [query, parameter] of cases) {
      const res = await logOf(acme.apiKey, `?${query}`);
      assert.equal(res.status, 400, query);
      assert.ok(isErrorBody(res.body), JSON.stringify(res.body));
      assert.equal(res.body.code, 'VALIDATION_ERROR');
      assert.match(res.body.message, new RegExp(`^${parameter}\\b`), `${query}: ${res.body.message}`);
    }
  });

  it("never shows one protocol another's requests", async () => {
    const other = await gw.createProtocol({ tier: 3 });
    const res = await logOf(other.apiKey);
    assert.equal(res.status, 200);
    assert.equal(res.body.total, 0);
    assert.deepEqual(res.body.items, []);
    const again = await logOf(other.sandboxApiKey, '?endpoint=usage');
    assert.equal(again.body.total, 0);
    const own = await logOf(other.apiKey);
    assert.ok(own.body.items.every((i: any) => i.endpoint === '/v1/requests'));
  });

  it('does not record requests refused for a bad key under anyone', async () => {
    for (const key of [undefined, 'hrld_live_0123456789012345678901234567890123456789', 'nonsense']) {
      assert.equal((await call(gw.url, key, 'GET', '/v1/usage')).status, 401);
    }
    await gw.herald.deps.requestLog.flush();
    const rows = await gw.herald.deps.db.query<{ n: number }>('SELECT count(*)::int AS n FROM request_log WHERE status_code = 401');
    assert.deepEqual(rows, [{ n: 0 }]);
  });
});
