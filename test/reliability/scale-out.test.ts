/**
 * Scale-out under faults: 2 `api` + 2 `worker` processes on one PostgreSQL schema and one Redis
 * prefix. Notifications over the three channels reach local SMTP / Telegram / Twilio servers
 * exactly once (a repeat only for sends not yet committed when a worker was SIGKILLed), each is reported
 * by a signed webhook, the per-protocol rate limit holds across both APIs, and no process logged a
 * secret or a contact value.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { ensureBuilt, killStrays } from '../foundation/server-process.js';
import { SUCCESS_BATCH } from '../../packages/server/src/webhooks/dispatcher.js';
import { ADMIN_TOKEN, ENCRYPTION_KEY, call, createProtocol, freshSchema, onPostgres, sleep, waitFor, type TestProtocol } from '../support/gateway.js';
import { importIdentity, makeWallet } from '../support/wallets.js';
import { Cluster } from './support/cluster.js';
import { generateLoad, type LoadReport } from './support/load.js';
import { SIZES, SOAK, TEST_TIMEOUT_MS } from './support/mode.js';
import { findLeaks, type Needle } from './support/secret-scan.js';
import { Ledger, startSinks, type Sinks } from './support/sinks.js';

const shared = onPostgres && Boolean(process.env.REDIS_URL);
const BATCH = 20;
/** Delivery loops per worker process. */
const LOOPS = 2;
/**
 * The channels the load goes out on. A worker process holds at most a batch of claimed, unsettled
 * rows per channel (its loops share those places), so a kill can strand, and repeat, that many.
 */
const CHANNELS = 3;
const LEASE_MS = 2000;
const WALLETS = 12;

interface Contact {
  wallet: string;
  email: string;
  phone: string;
  telegramChatId: string;
}

describe('scale-out: 2 api + 2 worker processes on PostgreSQL + Redis', { skip: !shared && 'needs DATABASE_URL and REDIS_URL', timeout: TEST_TIMEOUT_MS * 3 }, () => {
  let schema: Awaited<ReturnType<typeof freshSchema>>;
  let sinks: Sinks;
  let cluster: Cluster;
  let db: pg.Client;
  let urls: string[];
  const contacts: Contact[] = [];
  const needles: Needle[] = [];

  before(async () => {
    ensureBuilt();
    schema = await freshSchema();
    sinks = await startSinks();
    cluster = new Cluster({
      DATABASE_URL: schema.url,
      REDIS_URL: process.env.REDIS_URL!,
      HERALD_REDIS_PREFIX: `rel${randomBytes(4).toString('hex')}:`,
      HERALD_ENCRYPTION_KEY: ENCRYPTION_KEY,
      HERALD_ADMIN_TOKEN: ADMIN_TOKEN,
      HERALD_WORKER_BATCH: String(BATCH),
      HERALD_WORKER_LOOPS: String(LOOPS),
      HERALD_DELIVERY_LEASE_MS: String(LEASE_MS),
      HERALD_WORKER_POLL_MS: '250',
      // A transient provider failure is retried in seconds, not the production 30 s.
      HERALD_DELIVERY_RETRY_BASE_MS: '500',
      HERALD_ALLOW_PRIVATE_WEBHOOKS: 'true',
      HERALD_WEBHOOK_TIMEOUT_MS: '5000',
      // Setup (protocols, identities) comes from one address; the per-IP limit is not under test.
      HERALD_IP_RATE_LIMIT: '10000',
      ...sinks.env,
    });
    // The first API migrates; the others start together, as a scaled-out deployment does.
    await cluster.start('api');
    await Promise.all([cluster.start('api'), cluster.start('worker'), cluster.start('worker')]);
    urls = cluster.apis.map((n) => n.url!);
    db = new pg.Client({ connectionString: schema.url });
    await db.connect();
    for (let i = 0; i < WALLETS; i++) {
      const contact = {
        wallet: makeWallet().address,
        email: `holder${i}.${randomBytes(3).toString('hex')}@reliability.test`,
        phone: `+1555${String(2000000 + i * 7919).padStart(7, '0')}`,
        telegramChatId: String(7_300_000_000 + i * 104_729),
      };
      await importIdentity(urls[i % 2], contact.wallet, { email: contact.email, phone: contact.phone, telegramChatId: contact.telegramChatId });
      contacts.push(contact);
      needles.push({ kind: 'email', value: contact.email }, { kind: 'phone', value: contact.phone }, { kind: 'telegram chat id', value: contact.telegramChatId });
    }
    needles.push(
      { kind: 'credential', value: ADMIN_TOKEN },
      { kind: 'credential', value: sinks.telegram.token },
      { kind: 'credential', value: sinks.twilio.authToken },
    );
  });

  after(async () => {
    await cluster?.stop().catch(() => {});
    await killStrays();
    await db?.end().catch(() => {});
    await sinks?.close();
    await schema?.drop();
  });

  const statusCounts = async () => {
    const { rows } = await db.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM notifications GROUP BY status');
    return Object.fromEntries(rows.map((r) => [r.status, r.n])) as Record<string, number>;
  };

  it('delivers every accepted notification exactly once, signed webhooks for each, while workers are SIGKILLed', { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const protocol = await createProtocol(urls[0], { tier: 3, overageEnabled: true, name: 'Scale-out' });
    needles.push({ kind: 'api key', value: protocol.apiKey }, { kind: 'api key', value: protocol.sandboxApiKey });
    const hook = await call(urls[1], protocol.apiKey, 'POST', '/v1/webhooks', {
      url: `${sinks.receiver.url}/herald`,
      events: ['notification.delivered', 'notification.failed', 'notification.bounced'],
    });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    needles.push({ kind: 'webhook secret', value: hook.body.secret });

    const ledger = new Ledger(sinks, () => hook.body.secret);
    const drain = setInterval(() => ledger.drain(), 250);
    const total = SIZES.notifications;
    // Paced so the load lasts through every kill: the kills land while deliveries are under way.
    const ratePerSecond = Math.ceil(total / (((SIZES.workerKills + 1.5) * SIZES.killEveryMs) / 1000));
    const started = Date.now();
    try {
      const loading: Promise<LoadReport> = generateLoad({
        urls,
        apiKey: protocol.apiKey,
        wallets: contacts.map((c) => c.wallet),
        total,
        ledger,
        concurrency: 6,
        ratePerSecond,
        sizes: [1, 5, 20, 1, 50],
        timeoutMs: 30_000,
      });
      let loadDone = false;
      void loading.finally(() => (loadDone = true));

      await waitFor(async () => ledger.deliveredCount() >= Math.min(100, total / 10), 60_000, 100);
      const kills: Array<{ atMs: number; worker: number; deliveredBefore: number }> = [];
      while (kills.length < SIZES.workerKills && ledger.deliveredCount() < ledger.idBySeq.size + (loadDone ? 0 : 1)) {
        await sleep(SIZES.killEveryMs);
        const index = Math.floor(Math.random() * cluster.workers.length);
        kills.push({ atMs: Date.now() - started, worker: index, deliveredBefore: ledger.deliveredCount() });
        await cluster.killAndRestart(cluster.workers[index]);
      }
      const load = await loading;
      const loadedAt = Date.now() - started;

      const accepted = ledger.idBySeq.size;
      await waitFor(async () => ledger.deliveredCount() === accepted, SOAK ? 600_000 : 90_000, 200).catch(() => {});
      const deliveredAt = Date.now() - started;
      const settled = await waitFor(
        async () => {
          const counts = await statusCounts();
          return (counts.queued ?? 0) + (counts.sending ?? 0) === 0 ? counts : undefined;
        },
        60_000,
        250,
      ).catch(async () => statusCounts());
      // A worker killed mid-chain holds its webhook deliveries' leases (60 s) before another worker resumes them.
      await waitFor(async () => ledger.reportedCount() === accepted, SOAK ? 600_000 : 120_000, 250).catch(() => {});
      const reportedAt = Date.now() - started;
      const figures = ledger.summary();

      t.diagnostic(
        `scale-out figures: ${JSON.stringify({
          mode: SOAK ? 'soak' : 'short',
          total,
          ratePerSecond,
          load: { requests: load.requests, byStatus: load.byStatus, timeouts: load.timeouts, networkErrors: load.networkErrors, maxLatencyMs: load.maxLatencyMs },
          kills,
          batch: BATCH,
          loopsPerWorker: LOOPS,
          repeatBound: kills.length * CHANNELS * BATCH,
          leaseMs: LEASE_MS,
          ...figures,
          stuck: (settled.queued ?? 0) + (settled.sending ?? 0),
          statuses: settled,
          timingsMs: { loaded: loadedAt, allDelivered: deliveredAt, allReported: reportedAt },
        })}`,
      );

      assert.deepEqual(Object.keys(load.byStatus), ['202'], `every request accepted: ${JSON.stringify(load.byStatus)} ${JSON.stringify(load.badErrorBodies)}`);
      assert.equal(load.timeouts + load.networkErrors, 0, 'no request hung or failed');
      assert.equal(figures.accepted, total);
      assert.ok(kills.length >= Math.min(2, SIZES.workerKills), `the workers were killed during the load (${kills.length} kills)`);
      assert.equal(figures.lost, 0, 'every accepted notification reached its provider');
      assert.equal(figures.unexpected, 0, 'nothing arrived that was not accepted');
      assert.equal(figures.unparsed, 0, 'every arrival names its notification');
      assert.equal(figures.wrongChannel, 0, 'each went out on its chosen channel');
      assert.equal(figures.wrongMessageId, 0, "each email's Message-ID is its notification id");
      assert.ok(
        figures.extraSends <= kills.length * CHANNELS * BATCH,
        `repeats (${figures.extraSends}) ≤ kills (${kills.length}) × channels (${CHANNELS}) × batch (${BATCH}), the rows a worker holds`,
      );
      assert.equal((settled.queued ?? 0) + (settled.sending ?? 0), 0, `nothing left queued or sending: ${JSON.stringify(settled)}`);
      assert.equal(settled.delivered, total, `every row ends delivered: ${JSON.stringify(settled)}`);
      assert.equal(figures.badSignatures, 0, 'every webhook request is signed with the endpoint secret');
      assert.equal(figures.unreported, 0, 'every delivered notification has a notification.delivered event');
      assert.equal(figures.duplicateDeliveredEvents, 0, 'no notification is reported delivered by two different events');
      // An endpoint gets one request at a time, and its successes are recorded together (up to
      // SUCCESS_BATCH, within 50 ms): a kill can leave that many sent but unrecorded, sent again later.
      assert.ok(
        figures.repeatedEvents <= kills.length * SUCCESS_BATCH,
        `webhook requests repeated (${figures.repeatedEvents}) ≤ kills (${kills.length}) × successes recorded per write (${SUCCESS_BATCH})`,
      );
      assert.equal(figures.otherEvents, 0, 'no failure or bounce events');
    } finally {
      clearInterval(drain);
    }
  });

  it('holds a Growth protocol to 20 requests per second across both APIs', { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const growth: TestProtocol = await createProtocol(urls[0], { tier: 1, name: 'Growth hammer' });
    needles.push({ kind: 'api key', value: growth.apiKey }, { kind: 'api key', value: growth.sandboxApiKey });
    const lanes = 8;
    const LIMIT = 20;
    const byWindow = new Map<number, number>();
    const byClientSecond = new Map<number, number>();
    const byApi = urls.map(() => ({ ok: 0, limited: 0 }));
    const other: string[] = [];
    const deadline = Date.now() + SIZES.rateHammerMs;
    let sent = 0;
    await Promise.all(
      Array.from({ length: lanes }, async (_, lane) => {
        for (let i = 0; Date.now() < deadline; i++) {
          const api = (lane + i) % urls.length;
          // Both keys of the protocol share its budget.
          const key = i % 3 === 0 ? growth.sandboxApiKey : growth.apiKey;
          const res = await call(urls[api], key, 'GET', '/v1/protocols/me');
          sent += 1;
          const window = Number(res.headers.get('x-ratelimit-reset')) - 1;
          if (res.status === 200) {
            byApi[api].ok += 1;
            byWindow.set(window, (byWindow.get(window) ?? 0) + 1);
            const second = Math.floor(Date.now() / 1000);
            byClientSecond.set(second, (byClientSecond.get(second) ?? 0) + 1);
          } else if (res.status === 429 && res.body.code === 'RATE_LIMIT_EXCEEDED') {
            byApi[api].limited += 1;
          } else {
            other.push(`${res.status} ${JSON.stringify(res.body)}`);
          }
        }
      }),
    );
    const maxPerWindow = Math.max(...byWindow.values());
    const maxPerClientSecond = Math.max(...byClientSecond.values());
    t.diagnostic(
      `rate-limit figures: ${JSON.stringify({ limit: LIMIT, sent, lanes, maxPerWindow, maxPerClientSecond, windows: [...byWindow.values()], byApi })}`,
    );
    assert.deepEqual(other, []);
    assert.ok(maxPerWindow <= LIMIT, `at most ${LIMIT} accepted in any one-second window across both APIs, got ${maxPerWindow}`);
    // Seen from the client, an answer allowed just before a second ends can arrive after it: at most one per lane.
    assert.ok(maxPerClientSecond <= LIMIT + lanes, `at most ${LIMIT} + ${lanes} accepted per client-side calendar second, got ${maxPerClientSecond}`);
    for (const [i, counts] of byApi.entries()) assert.ok(counts.ok > 0 && counts.limited > 0, `API ${i + 1} both accepted and refused: ${JSON.stringify(counts)}`);
    assert.ok(maxPerWindow >= LIMIT / 2, `the shared budget is used, not starved: ${[...byWindow.values()]}`);
  });

  it('logged no API key, webhook secret, credential or contact value in any process', { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const logs = cluster.instances.map((p, i) => ({ where: `process ${i + 1} (pid ${p.pid})`, text: `${p.stdout()}\n${p.stderr()}` }));
    const leaks = findLeaks(logs, needles);
    t.diagnostic(`log scan: ${cluster.instances.length} processes, ${logs.reduce((n, l) => n + l.text.length, 0)} bytes, ${needles.length} values, ${leaks.length} leaks`);
    assert.deepEqual(leaks, []);
  });
});
