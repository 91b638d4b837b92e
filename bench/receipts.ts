/**
 * Receipts: on-chain receipts confirmed per second end to end (leaf, batch, memo, Groth16 proof), by batch size.
 *
 * Each case starts a gateway (embedded litesvm chain), sends `--receipts` notifications with
 * `receipt: true` through POST /v1/notify/bulk, lets the capture provider deliver them, and
 * waits for every `receipt.confirmed` event. Latency is confirmed_at − delivered_at of each
 * receipt; throughput is receipts over the time from the first delivery to the last
 * confirmation. One receipt is confirmed first as a warm-up, so the prover's start-up (child
 * process, snarkjs, keys) is not counted. Batches close by size; the last partial one after
 * HERALD_RECEIPT_BATCH_MS (200 ms here).
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import bs58 from 'bs58';
import { ENGINE_LABELS, ENGINES, startBenchGateway, type BenchGateway, type Engine } from './support/gateway.js';
import { machineFacts } from './support/report.js';

interface Options {
  engine: Engine;
  receipts: number;
  batchSizes: number[];
}

function options(args: string[]): Options {
  const { values } = parseArgs({ args, options: { engine: { type: 'string' }, receipts: { type: 'string' }, 'batch-sizes': { type: 'string' } } });
  const engine = (values.engine ?? 'pglite') as Engine;
  if (!ENGINES.includes(engine)) throw new Error(`unknown engine "${engine}"; use ${ENGINES.join(', ')}`);
  const receipts = Math.max(1, Number.parseInt(values.receipts ?? '48', 10) || 48);
  const batchSizes = (values['batch-sizes'] ?? '1,8,48').split(',').map((s) => Math.min(1024, Math.max(1, Number.parseInt(s, 10) || 1)));
  return { engine, receipts, batchSizes };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

async function api(gw: BenchGateway, key: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

async function waitForConfirmations(gw: BenchGateway, ids: string[], timeoutMs: number): Promise<{ delivered: number; confirmed: number }[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await gw.herald.deps.db.query<{ delivered_at: string; confirmed_at: string }>(
      `SELECT data->>'delivered_at' AS delivered_at, data->>'confirmed_at' AS confirmed_at FROM events
       WHERE type = 'receipt.confirmed' AND data->>'notification_id' = ANY($1::text[])`,
      [ids],
    );
    if (rows.length === ids.length) return rows.map((r) => ({ delivered: Date.parse(r.delivered_at), confirmed: Date.parse(r.confirmed_at) }));
    const failed = await gw.herald.deps.db.query(`SELECT receipt_failure_reason FROM notifications WHERE id = ANY($1::text[]) AND receipt_status = 'failed' LIMIT 1`, [ids]);
    if (failed.length) throw new Error(`a receipt failed: ${failed[0].receipt_failure_reason}`);
    if (Date.now() > deadline) throw new Error(`only ${rows.length} of ${ids.length} receipts confirmed within ${timeoutMs} ms`);
    await sleep(100);
  }
}

async function measure(engine: Engine, batchSize: number, count: number): Promise<string> {
  const gw = await startBenchGateway(engine, { HERALD_RECEIPT_BATCH_SIZE: String(batchSize), HERALD_RECEIPT_BATCH_MS: '200', HERALD_WORKER_POLL_MS: '50' });
  try {
    const protocol = await gw.createProtocol({ tier: 3 });
    const wallet = bs58.encode(randomBytes(32));
    const imported = await fetch(`${gw.url}/v1/admin/identities`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.herald.deps.config.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ wallet, telegramChatId: '4242' }),
    });
    if (imported.status !== 201) throw new Error(`identity import failed: ${imported.status}`);
    const send = async (n: number) => {
      const ids: string[] = [];
      for (let i = 0; i < n; i += 100) {
        const notifications = Array.from({ length: Math.min(100, n - i) }, (_, k) => ({ wallet, subject: `Receipt ${i + k}`, body: 'Delivered with proof.', category: 'defi', receipt: true }));
        const { results } = await api(gw, protocol.apiKey, 'POST', '/v1/notify/bulk', { notifications });
        ids.push(...results.map((r: { notificationId: string }) => r.notificationId));
      }
      return ids;
    };
    await waitForConfirmations(gw, await send(1), 300_000);
    const receipts = await waitForConfirmations(gw, await send(count), 30 * 60_000);
    const first = Math.min(...receipts.map((r) => r.delivered));
    const last = Math.max(...receipts.map((r) => r.confirmed));
    const latencies = receipts.map((r) => r.confirmed - r.delivered).sort((a, b) => a - b);
    const [batches] = await gw.herald.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM receipt_batches WHERE status = 'confirmed'`);
    const seconds = (last - first) / 1000;
    return [
      String(batchSize),
      String(count),
      String(batches.n - 1),
      seconds.toFixed(1),
      (count / seconds).toFixed(2),
      String(quantile(latencies, 0.5)),
      String(quantile(latencies, 0.95)),
      String(latencies[latencies.length - 1]),
    ].join(' | ');
  } finally {
    await gw.close();
  }
}

export async function main(args: string[]): Promise<void> {
  const opts = options(args);
  process.stdout.write(`## receipts: confirmed per second, proofs included\n\n${machineFacts()}\n`);
  process.stdout.write(`engine: ${ENGINE_LABELS[opts.engine]}; chain: in-process litesvm; circuit: depth-10 Poseidon tree, 3,014 constraints\n\n`);
  process.stdout.write('| batch size | receipts | memo txs | seconds | receipts/s | latency p50 ms | p95 ms | max ms |\n');
  process.stdout.write('|---|---|---|---|---|---|---|---|\n');
  for (const size of opts.batchSizes) process.stdout.write(`| ${await measure(opts.engine, size, opts.receipts)} |\n`);
  process.stdout.write('\nProofs are made in a child process, two at a time; snarkjs spreads each over every core.\n');
}
