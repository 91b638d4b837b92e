/**
 * Slow and greedy clients: slow-header and slow-body clients and hundreds of idle keep-alive
 * connections do not stop the server answering a normal client, and each is cut off by its
 * timeout (headersTimeout 10 s, requestTimeout 30 s, keepAliveTimeout 5 s, see app.ts), with the
 * contract's error body when there is anyone left to answer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ensureBuilt, killStrays } from '../foundation/server-process.js';
import { ADMIN_TOKEN, ENCRYPTION_KEY, createProtocol, freshSchema, onPostgres, sleep, waitFor, type TestProtocol } from '../support/gateway.js';
import { Cluster, isAlive, type Node } from './support/cluster.js';
import { idleKeepAlive, percentile, slowBody, slowHeader, type Held } from './support/greedy-clients.js';
import { isContractError } from './support/contract-error.js';
import { SIZES, SOAK, TEST_TIMEOUT_MS } from './support/mode.js';

const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/**
 * How late a timeout may bite: Node looks for expired requests once a second (app.ts), and the
 * shared CI machine adds event-loop lag. Node's default sweep (30 s) would overshoot this.
 */
const SLACK_MS = 5_000;

describe('slow and greedy clients', { timeout: TEST_TIMEOUT_MS }, () => {
  let cluster: Cluster;
  let server: Node;
  let port: number;
  let protocol: TestProtocol;
  let drop: (() => Promise<void>) | undefined;

  before(async () => {
    ensureBuilt();
    const schema = onPostgres ? await freshSchema() : undefined;
    drop = schema?.drop;
    cluster = new Cluster({
      ...(schema ? { DATABASE_URL: schema.url } : { HERALD_DATA_DIR: 'memory://' }),
      HERALD_ENCRYPTION_KEY: ENCRYPTION_KEY,
      HERALD_ADMIN_TOKEN: ADMIN_TOKEN,
      // 500 keep-alive connections each make one request from one address.
      HERALD_IP_RATE_LIMIT: '100000',
    });
    server = await cluster.start('api');
    port = Number(new URL(server.url!).port);
    protocol = await createProtocol(server.url!, { tier: 3, name: 'Normal client' });
  });

  after(async () => {
    await cluster?.stop().catch(() => {});
    await killStrays();
    await drop?.();
  });

  /** `count` requests of a normal client, one after the other, on keep-alive; latencies in ms. */
  async function normalClient(count: number): Promise<{ latencies: number[]; failures: string[] }> {
    const latencies: number[] = [];
    const failures: string[] = [];
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      try {
        const res = await fetch(`${server.url}/v1/protocols/me`, { headers: { authorization: `Bearer ${protocol.apiKey}` }, signal: AbortSignal.timeout(10_000) });
        await res.arrayBuffer();
        if (res.status !== 200) failures.push(`status ${res.status}`);
      } catch (error) {
        failures.push((error as Error).message);
      }
      latencies.push(performance.now() - started);
      await sleep(10);
    }
    return { latencies, failures };
  }

  it('keeps answering a normal client while slow and idle clients hold connections, and cuts each off by its timeout', { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const baseline = await normalClient(SIZES.normalRequests);
    const attackStarted = Date.now();
    const held: Held[] = [
      ...Array.from({ length: SIZES.slowClients }, () => slowHeader(port)),
      ...Array.from({ length: SIZES.slowClients }, () => slowBody(port, protocol.apiKey)),
      ...Array.from({ length: SIZES.idleConnections }, () => idleKeepAlive(port)),
    ];
    await sleep(500);
    const during = await normalClient(SIZES.normalRequests);
    const openWhileMeasured = held.filter((h) => h.closedAfterMs === undefined).length;
    const measuredForMs = Date.now() - attackStarted;
    await waitFor(async () => held.every((h) => h.closedAfterMs !== undefined), REQUEST_TIMEOUT_MS + 2 * SLACK_MS + 5000, 250).catch(() => {});
    for (const h of held) h.socket.destroy();

    const byKind = (kind: Held['kind']) => held.filter((h) => h.kind === kind);
    const closing = (kind: Held['kind']) => {
      const times = byKind(kind).map((h) => h.closedAfterMs ?? Infinity);
      return { count: times.length, firstMs: Math.min(...times), lastMs: Math.max(...times) };
    };
    const figures = {
      mode: SOAK ? 'soak' : 'short',
      held: { slowHeader: SIZES.slowClients, slowBody: SIZES.slowClients, idleKeepAlive: SIZES.idleConnections },
      normalClient: {
        requests: SIZES.normalRequests,
        baseline: { p50: Math.round(percentile(baseline.latencies, 50)), p99: Math.round(percentile(baseline.latencies, 99)) },
        duringAttack: { p50: Math.round(percentile(during.latencies, 50)), p99: Math.round(percentile(during.latencies, 99)), max: Math.round(Math.max(...during.latencies)) },
        failures: during.failures.length,
      },
      heldConnectionsOpenAtEndOfMeasurement: openWhileMeasured,
      measurementEndedAfterMs: measuredForMs,
      closedByServer: { slowHeader: closing('slow-header'), slowBody: closing('slow-body'), idleKeepAlive: closing('idle-keep-alive') },
      answers: {
        slowHeader: [...new Set(byKind('slow-header').flatMap((h) => h.responses.map((r) => r.status)))],
        slowBody: [...new Set(byKind('slow-body').flatMap((h) => h.responses.map((r) => r.status)))],
      },
    };
    t.diagnostic(`slow-clients figures: ${JSON.stringify(figures)}`);

    assert.deepEqual(during.failures, [], 'every request of the normal client succeeded');
    assert.ok(figures.normalClient.duringAttack.p99 < 1500, `p99 of the normal client during the attack: ${figures.normalClient.duringAttack.p99} ms`);
    assert.ok(isAlive(server.current), 'the server is still running');

    const within = (kind: Held['kind'], timeoutMs: number) => {
      const { firstMs, lastMs } = closing(kind);
      assert.ok(firstMs >= timeoutMs - 1000 && lastMs <= timeoutMs + SLACK_MS, `${kind}: closed between ${firstMs} and ${lastMs} ms, expected about ${timeoutMs} ms`);
    };
    within('idle-keep-alive', KEEP_ALIVE_TIMEOUT_MS);
    within('slow-header', HEADERS_TIMEOUT_MS);
    within('slow-body', REQUEST_TIMEOUT_MS);
    for (const h of byKind('idle-keep-alive')) assert.deepEqual(h.responses.map((r) => r.status), [200], 'the idle connection got its one answer, then was closed');
    // Whoever is cut off mid-request and still listening is told so in the one error shape.
    for (const h of [...byKind('slow-header'), ...byKind('slow-body')]) {
      for (const r of h.responses) assert.ok(r.status === 408 && isContractError(408, r.body), `${h.kind}: ${r.status} ${r.body}`);
    }
    // The protocol's request log records what its slow-body requests were told, not the route's
    // failure on the cut body that followed.
    const logged = await waitFor(async () => {
      const res = await fetch(`${server.url}/v1/requests?endpoint=/v1/notify&limit=100`, { headers: { authorization: `Bearer ${protocol.apiKey}` } });
      assert.equal(res.status, 200, await res.clone().text());
      const page = (await res.json()) as { items: { statusCode: number }[] };
      return page.items.length >= SIZES.slowClients ? page.items : undefined;
    }, 10_000);
    assert.deepEqual(
      logged.map((entry) => entry.statusCode),
      Array(SIZES.slowClients).fill(408),
    );
  });
});
