/**
 * PostgreSQL goes away mid-load: a TCP proxy between the gateway processes and the database drops
 * every connection and refuses new ones for a few seconds. Meanwhile the API answers 503 with the
 * contract's error body, promptly; no process dies; once the database is back everything recovers
 * without a restart, and every notification that was accepted (202) ends delivered.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { ensureBuilt, killStrays } from '../foundation/server-process.js';
import { ADMIN_TOKEN, ENCRYPTION_KEY, call, createProtocol, freshSchema, onPostgres, sleep, waitFor } from '../support/gateway.js';
import { importIdentity, makeWallet } from '../support/wallets.js';
import { Cluster, isAlive } from './support/cluster.js';
import { generateLoad, resendWithKeys, type LoadOptions } from './support/load.js';
import { SIZES, SOAK, TEST_TIMEOUT_MS } from './support/mode.js';
import { Ledger, startSinks, subjectFor, type Sinks } from './support/sinks.js';
import { proxyDatabase, type TcpProxy } from './support/tcp-proxy.js';

const BATCH = 20;
/** Delivery loops per worker process: each holds at most one batch whose commit an outage can swallow. */
const LOOPS = 2;
const REQUEST_TIMEOUT_MS = 6000;
// Long, so a delivery seconds after the outage proves the cross-process wake-up came back.
const POLL_MS = 10_000;

describe('database outage (PostgreSQL behind a TCP proxy that is cut)', { skip: !onPostgres && 'needs DATABASE_URL (PostgreSQL)', timeout: TEST_TIMEOUT_MS }, () => {
  let schema: Awaited<ReturnType<typeof freshSchema>>;
  let proxy: TcpProxy;
  let sinks: Sinks;
  let cluster: Cluster;
  let db: pg.Client;
  let url: string;
  let wallets: string[];

  before(async () => {
    ensureBuilt();
    schema = await freshSchema();
    let proxied: string;
    ({ proxy, url: proxied } = await proxyDatabase(schema.url));
    sinks = await startSinks();
    cluster = new Cluster({
      DATABASE_URL: proxied,
      ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL, HERALD_REDIS_PREFIX: `rel${randomBytes(4).toString('hex')}:` } : {}),
      HERALD_ENCRYPTION_KEY: ENCRYPTION_KEY,
      HERALD_ADMIN_TOKEN: ADMIN_TOKEN,
      HERALD_WORKER_BATCH: String(BATCH),
      HERALD_WORKER_LOOPS: String(LOOPS),
      HERALD_DELIVERY_LEASE_MS: '2000',
      HERALD_WORKER_POLL_MS: String(POLL_MS),
      HERALD_DELIVERY_RETRY_BASE_MS: '500',
      HERALD_IP_RATE_LIMIT: '10000',
      ...sinks.env,
    });
    url = (await cluster.start('api')).url!;
    await cluster.start('worker');
    db = new pg.Client({ connectionString: schema.url });
    await db.connect();
    wallets = [];
    for (let i = 0; i < 6; i++) {
      const wallet = makeWallet().address;
      await importIdentity(url, wallet, { email: `outage${i}@reliability.test`, phone: `+1555303${String(1000 + i)}`, telegramChatId: String(8_100_000_000 + i) });
      wallets.push(wallet);
    }
  });

  after(async () => {
    await proxy?.restore().catch(() => {});
    await cluster?.stop().catch(() => {});
    await killStrays();
    await db?.end().catch(() => {});
    await proxy?.close();
    await sinks?.close();
    await schema?.drop();
  });

  it('answers 503 promptly while the database is down, stays up, and loses no accepted notification', { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const protocol = await createProtocol(url, { tier: 3, overageEnabled: true, name: 'Outage' });
    const ledger = new Ledger(sinks);
    const drain = setInterval(() => ledger.drain(), 250);
    const pids = cluster.nodes.map((n) => n.current.pid);
    try {
      const started = Date.now();
      const deadline = started + SIZES.outageLoadMs;
      const loadOptions: LoadOptions = {
        urls: [url],
        apiKey: protocol.apiKey,
        wallets,
        total: 1_000_000,
        ledger,
        concurrency: 4,
        ratePerSecond: 60,
        sizes: [1, 5],
        timeoutMs: REQUEST_TIMEOUT_MS,
        stop: () => Date.now() > deadline,
        idempotencyPrefix: 'outage',
      };
      const loading = generateLoad(loadOptions);

      const cutAt = 2500;
      await sleep(cutAt);
      await proxy.cut();
      // /health says so too, promptly (it bounds its own probe).
      await sleep(Math.min(1000, SIZES.outageMs / 2));
      const healthStarted = Date.now();
      const health = await fetch(`${url}/health`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      const healthMs = Date.now() - healthStarted;
      const healthBody = (await health.json()) as Record<string, unknown>;
      await sleep(Math.max(0, cutAt + SIZES.outageMs - (Date.now() - started)));
      await proxy.restore();
      const restoredAt = Date.now() - started;
      const load = await loading;

      const alive = cluster.nodes.map((n) => isAlive(n.current));
      const samePids = cluster.nodes.every((n, i) => n.current.pid === pids[i]);
      assert.ok(alive.every(Boolean) && samePids, 'no process died or was restarted');
      await waitFor(async () => (await call(url, undefined, 'GET', '/health')).status === 200, 15_000, 100);
      // A 503 can come after the commit (the connection dropped before the answer): the client
      // retries everything it was not told was accepted, with the same idempotency keys.
      const unacknowledged = [...ledger.unacknowledged];
      const retried = await resendWithKeys(loadOptions, unacknowledged);

      const accepted = ledger.idBySeq.size;
      await waitFor(async () => ledger.deliveredCount() === accepted, SOAK ? 300_000 : 60_000, 100).catch(() => {});
      const allDeliveredMs = Date.now() - started;

      // The cross-process wake-up (LISTEN/NOTIFY) is back: once the worker is idle (asleep until its
      // next poll), a new notification still goes out at once rather than at that poll.
      await sleep(1500);
      const probeSeq = 900_000;
      const probeSent = Date.now();
      const probe = await call(url, protocol.apiKey, 'POST', '/v1/notify', { wallet: wallets[0], subject: subjectFor(probeSeq), body: 'After the outage', category: 'system', preferredChannel: 'email' });
      assert.equal(probe.status, 202, JSON.stringify(probe.body));
      ledger.accept(probeSeq, probe.body.notificationId, 'email');
      const probeDelivered = await waitFor(async () => (ledger.arrivalsOf(probeSeq) > 0 ? Date.now() : undefined), POLL_MS + 5000, 20).catch(() => undefined);
      const statusCounts = async () => {
        const { rows } = await db.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM notifications GROUP BY status');
        return Object.fromEntries(rows.map((r) => [r.status, r.n])) as Record<string, number>;
      };
      // Rows whose commit the outage swallowed stay `sending` until their lease ends and they are sent again.
      const statuses = await waitFor(
        async () => {
          const counts = await statusCounts();
          return (counts.queued ?? 0) + (counts.sending ?? 0) === 0 ? counts : undefined;
        },
        30_000,
        250,
      ).catch(statusCounts);
      const figures = ledger.summary();
      const late503 = load.unavailableAt.filter((at) => at > restoredAt + 2000);
      // Judged by when the answer came: on a loaded machine a request sent a second before the cut
      // can still be waiting when it happens, and its 503 is then right.
      const early503 = load.unavailableAnsweredAt.filter((at) => at < cutAt - 100);

      t.diagnostic(
        `database-outage figures: ${JSON.stringify({
          mode: SOAK ? 'soak' : 'short',
          outageMs: SIZES.outageMs,
          cutAtMs: cutAt,
          restoredAtMs: restoredAt,
          load: { requests: load.requests, byStatus: load.byStatus, timeouts: load.timeouts, networkErrors: load.networkErrors, maxLatencyMs: load.maxLatencyMs },
          health: { status: health.status, ms: healthMs },
          first503Ms: load.unavailableAt[0],
          last503Ms: load.unavailableAt.at(-1),
          probeDeliveryMs: probeDelivered ? probeDelivered - probeSent : null,
          accepted: figures.accepted,
          lost: figures.lost,
          duplicated: figures.duplicated,
          extraSends: figures.extraSends,
          unexpected: figures.unexpected,
          retriedWithKeys: unacknowledged.length,
          retryAnswers: { queued: retried.queued, duplicate: retried.duplicate },
          repeatBound: LOOPS * BATCH,
          stuck: (statuses.queued ?? 0) + (statuses.sending ?? 0),
          statuses,
          allDeliveredMs,
        })}`,
      );

      assert.equal(load.timeouts, 0, `no request took longer than ${REQUEST_TIMEOUT_MS} ms`);
      assert.equal(load.networkErrors, 0, 'no connection was dropped without an answer');
      assert.deepEqual(
        Object.keys(load.byStatus).filter((s) => s !== '202' && s !== '503'),
        [],
        `only 202 and 503: ${JSON.stringify(load.byStatus)}`,
      );
      assert.ok((load.byStatus['503'] ?? 0) > 0, 'the outage was seen by the API');
      assert.deepEqual(load.badErrorBodies, [], "every 503 has the contract's error body");
      assert.deepEqual(early503, [], 'no 503 before the cut');
      assert.deepEqual(late503, [], 'no 503 two seconds after the database came back');
      assert.equal(health.status, 503);
      assert.equal(healthBody.code, 'SERVICE_UNAVAILABLE');
      assert.ok(healthMs < REQUEST_TIMEOUT_MS, `/health answered in ${healthMs} ms`);

      assert.ok(accepted > 50, `load was accepted before and after the outage (${accepted})`);
      assert.equal(figures.accepted, accepted + 1, 'the probe too');
      assert.deepEqual(retried.other, [], 'every retry is answered queued or duplicate');
      assert.equal(figures.unacknowledged, 0, 'after the retries every notification of the load is acknowledged');
      assert.equal(figures.lost, 0, 'every accepted notification was delivered');
      assert.equal(figures.unexpected, 0);
      assert.equal((statuses.queued ?? 0) + (statuses.sending ?? 0), 0, `nothing stuck: ${JSON.stringify(statuses)}`);
      assert.ok(figures.extraSends <= LOOPS * BATCH, `repeats (${figures.extraSends}) ≤ one batch (${BATCH}) per delivery loop (${LOOPS}) whose commit the outage swallowed`);
      assert.ok(probeDelivered && probeDelivered - probeSent < 3000, `after the outage a notification is delivered on a wake-up, not the ${POLL_MS} ms poll`);
    } finally {
      clearInterval(drain);
    }
  });
});
