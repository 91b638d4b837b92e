/**
 * Webhooks: signed events delivered per second to a local receiver (target: 3,000/s on PostgreSQL).
 *
 * Events are written straight into the events table (as the delivery worker would, in bulk), then
 * the gateway's own background loop fans them out to every endpoint and sends them; the clock
 * runs from the insert to the last request received. The receiver runs in a worker thread (so
 * it does not share the gateway's event loop), answers 200 at once and checks every signature.
 */
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { ENGINE_LABELS, ENGINES, startBenchGateway, type Engine } from './support/gateway.js';
import { machineFacts } from './support/report.js';
import { atLeastOne } from './support/options.js';

const RECEIVER = `
const http = require('node:http');
const { createHmac, timingSafeEqual } = require('node:crypto');
const { parentPort, workerData } = require('node:worker_threads');
let received = 0, badSignatures = 0;
const server = http.createServer({ keepAliveTimeout: 30000 }, (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const header = String(req.headers['x-service-signature'] || '');
    const m = /^t=(\\d+),v1=([0-9a-f]{64})$/.exec(header);
    const secret = workerData.secrets[req.url.slice(1)];
    const expected = m && secret ? createHmac('sha256', secret).update(m[1] + '.').update(body).digest('hex') : '';
    if (!m || !timingSafeEqual(Buffer.from(expected.padEnd(64)), Buffer.from(m[2]))) badSignatures++;
    received++;
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
  });
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
parentPort.on('message', (m) => {
  if (m === 'count') parentPort.postMessage({ received, badSignatures });
  if (m === 'close') { server.closeAllConnections(); server.close(); parentPort.close(); }
});
`;

interface Options {
  engines: Engine[];
  events: number;
  endpoints: number;
}

function options(args: string[]): Options {
  const { values } = parseArgs({ args, options: { engine: { type: 'string' }, events: { type: 'string' }, endpoints: { type: 'string' } } });
  const engines = (values.engine ?? process.env.BENCH_ENGINES ?? 'postgres').split(',').map((e) => e.trim()) as Engine[];
  for (const engine of engines) if (!ENGINES.includes(engine)) throw new Error(`unknown engine "${engine}"; use ${ENGINES.join(', ')}`);
  return { engines, events: atLeastOne(values.events, 2000), endpoints: Math.min(100, atLeastOne(values.endpoints, 20)) };
}

export async function main(args: string[]): Promise<void> {
  const opts = options(args);
  process.stdout.write(`## webhooks: signed events delivered per second\n\n${machineFacts()}\n`);
  process.stdout.write(`load: ${opts.events.toLocaleString('en-US')} events × ${opts.endpoints} endpoints of one protocol\n\n`);
  for (const engine of opts.engines) await measure(engine, opts);
}

async function measure(engine: Engine, opts: Options): Promise<void> {
  const gateway = await startBenchGateway(engine, { HERALD_ALLOW_PRIVATE_WEBHOOKS: 'true' });
  let worker: Worker | undefined;
  try {
    const protocol = await gateway.createProtocol({ tier: 3 });
    // The receiver needs each endpoint's secret: register them first (on a placeholder URL), then point them at it.
    const hooks: { id: string; secret: string }[] = [];
    for (let i = 0; i < opts.endpoints; i++) {
      const res = await fetch(`${gateway.url}/v1/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${protocol.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: 'http://127.0.0.1:9/placeholder', events: ['notification.delivered'] }),
      });
      if (res.status !== 201) throw new Error(`registering an endpoint failed: ${res.status} ${await res.text()}`);
      hooks.push((await res.json()) as { id: string; secret: string });
    }
    worker = new Worker(RECEIVER, { eval: true, workerData: { secrets: Object.fromEntries(hooks.map((h) => [h.id, h.secret])) } });
    const port = await new Promise<number>((resolve) => worker!.once('message', (m: { port: number }) => resolve(m.port)));
    const db = gateway.herald.deps.db;
    for (const hook of hooks) await db.query('UPDATE webhook_endpoints SET url = $2 WHERE id = $1', [hook.id, `http://127.0.0.1:${port}/${hook.id}`]);
    const count = () =>
      new Promise<{ received: number; badSignatures: number }>((resolve) => {
        worker!.once('message', resolve);
        worker!.postMessage('count');
      });

    const expected = opts.events * opts.endpoints;
    const started = performance.now();
    await db.query(
      `INSERT INTO events (id, protocol_id, type, data, created_at)
       SELECT 'evt_bench_' || lpad(i::text, 8, '0'), $1, 'notification.delivered',
              jsonb_build_object('notification_id', 'n' || i, 'wallet', '7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV', 'channel', 'email', 'delivered_at', now()),
              clock_timestamp()
       FROM generate_series(1, $2::int) AS i`,
      [protocol.id, opts.events],
    );
    gateway.herald.deps.wakeup.notify('webhooks');
    let last = { received: 0, badSignatures: 0 };
    const deadline = Date.now() + 300_000;
    while (last.received < expected && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      last = await count();
    }
    const seconds = (performance.now() - started) / 1000;
    // The last attempts are recorded just after their answers arrive.
    const recorded = () =>
      db.query<{ attempts: number; failed: number }>(
        `SELECT count(*)::int AS attempts, count(*) FILTER (WHERE error IS NOT NULL)::int AS failed FROM webhook_attempts`,
      );
    let [{ attempts, failed }] = await recorded();
    for (let i = 0; i < 50 && attempts < last.received; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      [{ attempts, failed }] = await recorded();
    }
    const rate = last.received / seconds;
    process.stdout.write(
      [
        `### ${ENGINE_LABELS[engine]}`,
        `deliveries received: ${last.received.toLocaleString('en-US')} of ${expected.toLocaleString('en-US')} in ${seconds.toFixed(2)} s`,
        `signed events delivered per second: ${Math.round(rate).toLocaleString('en-US')} (target 3,000: ${rate >= 3000 ? 'meets' : 'misses'})`,
        `bad signatures at the receiver: ${last.badSignatures}; attempts recorded: ${attempts.toLocaleString('en-US')} (${failed} failed)`,
        '',
      ].join('\n') + '\n',
    );
  } finally {
    worker?.postMessage('close');
    await gateway.close();
  }
}
