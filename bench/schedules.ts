/**
 * Schedules: firing lag (notification created − occurrence) with ~1,000 occurrences due per second, PostgreSQL.
 *
 * A real gateway (every role: API, scheduler, delivery worker, webhook loop in one process) on a
 * fresh PostgreSQL schema. 100,000 one-time schedules are written straight into the table (the
 * API would take minutes to create them, and creation is not what is measured), their occurrences
 * one millisecond apart, so 1,000 fall due every second for 100 seconds. One more is created
 * through POST /v1/schedule to prove the path. The scheduler fires them through the normal send
 * path; the delivery worker delivers them through the capture provider at the same time.
 *
 * Lag of each occurrence = notifications.created_at − schedule_runs.occurrence (the send path
 * stamps created_at when it accepts the notification, inside the firing transaction).
 * Target (issue 6): p99 < 1 s.
 *
 * Run: node --import tsx bench/schedules.ts [--schedules N] [--rate N] [--protocols N] [--wallets N]
 * (or npm run bench -- schedules …). Needs PostgreSQL at BENCH_DATABASE_URL
 * (default postgres://postgres@127.0.0.1:5432/test).
 */
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import bs58 from 'bs58';
import { parseArgs } from 'node:util';
import { newId } from '../packages/server/dist/ids.js';
import { startBenchGateway, type BenchGateway, type BenchProtocol } from './support/gateway.js';
import { machineFacts } from './support/report.js';

interface Options {
  schedules: number;
  rate: number;
  protocols: number;
  wallets: number;
}

function parseOptions(args: string[]): Options {
  const { values } = parseArgs({
    args,
    options: {
      schedules: { type: 'string', default: process.env.BENCH_SCHEDULES ?? '100000' },
      rate: { type: 'string', default: process.env.BENCH_SCHEDULE_RATE ?? '1000' },
      protocols: { type: 'string', default: '10' },
      wallets: { type: 'string', default: '200' },
    },
  });
  const whole = (name: keyof typeof values) => {
    const raw = values[name]!;
    if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new Error(`--${name} must be a whole number >= 1, got "${raw}"`);
    return Number(raw);
  };
  return { schedules: whole('schedules'), rate: whole('rate'), protocols: whole('protocols'), wallets: whole('wallets') };
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function adminPost(gateway: BenchGateway, path: string, body: unknown): Promise<void> {
  const token = gateway.herald.deps.config.adminToken!;
  const res = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`POST ${path} answered ${res.status}: ${await res.text()}`);
}

/** Writes the schedules in chunks: occurrence i falls `i / rate` seconds after `start`. */
async function insertSchedules(gateway: BenchGateway, protocols: BenchProtocol[], wallets: string[], options: Options, start: number) {
  const chunk = 10_000;
  for (let from = 0; from < options.schedules; from += chunk) {
    const n = Math.min(chunk, options.schedules - from);
    const index = Array.from({ length: n }, (_, k) => from + k);
    const due = index.map((i) => new Date(start + Math.floor((i * 1000) / options.rate)).toISOString());
    await gateway.herald.deps.db.query(
      `INSERT INTO schedules (id, protocol_id, environment, kind, wallet, subject, body, category, timezone, scheduled_for,
         status, next_run_at, created_at, updated_at)
       SELECT r.id, r.protocol_id, 'production', 'once', r.wallet, 'Bench reminder', 'Your **position** needs attention.', 'defi', 'UTC',
              (r.due AT TIME ZONE 'UTC'), 'PENDING', r.due, now(), now()
       FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[]) AS r(id, protocol_id, wallet, due)`,
      [index.map(() => newId.schedule()), index.map((i) => protocols[i % protocols.length].id), index.map((i) => wallets[i % wallets.length]), due],
    );
  }
}

async function createOneThroughApi(gateway: BenchGateway, key: string, wallet: string, at: number): Promise<void> {
  const res = await fetch(`${gateway.url}/v1/schedule`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ wallet, subject: 'Bench reminder', body: 'Through the API', category: 'defi', scheduledFor: new Date(at).toISOString() }),
  });
  if (res.status !== 201) throw new Error(`POST /v1/schedule answered ${res.status}: ${await res.text()}`);
}

interface Figures {
  fired: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
  failed: number;
}

async function lagFigures(gateway: BenchGateway): Promise<Figures> {
  const [row] = await gateway.herald.deps.db.query<Figures>(
    `SELECT count(*)::int AS fired,
            count(*) FILTER (WHERE r.outcome <> 'queued')::int AS failed,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY lag) AS p50,
            percentile_cont(0.99) WITHIN GROUP (ORDER BY lag) AS p99,
            max(lag) AS max, avg(lag) AS mean
     FROM (SELECT r.outcome, extract(epoch FROM n.created_at - r.occurrence) * 1000 AS lag
           FROM schedule_runs r JOIN notifications n ON n.id = r.notification_id) r`,
  );
  return row;
}

export async function main(args: string[]): Promise<void> {
  const options = parseOptions(args);
  const seconds = options.schedules / options.rate;
  process.stdout.write(`## schedules: firing lag, PostgreSQL\n\n${machineFacts()}\n`);
  process.stdout.write(
    `load: ${fmt(options.schedules)} one-time schedules, ${fmt(options.rate)} due per second for ${fmt(seconds, 1)} s, ` +
      `${options.protocols} protocols, ${options.wallets} wallets (email via the capture provider); scheduler batch 500, 8 firing transactions, poll 200 ms\n`,
  );
  const gateway = await startBenchGateway('postgres', { HERALD_WORKER_POLL_MS: '100' });
  try {
    const protocols: BenchProtocol[] = [];
    for (let i = 0; i < options.protocols; i++) protocols.push(await gateway.createProtocol({ tier: 3, overageEnabled: true, name: `Bench ${i + 1}` }));
    const wallets: string[] = [];
    for (let i = 0; i < options.wallets; i++) {
      // Any 32 bytes in base58 is a wallet address; the admin import registers it with an email.
      const wallet = bs58.encode(randomBytes(32));
      await adminPost(gateway, '/v1/admin/identities', { wallet, email: `holder${i}@example.com` });
      wallets.push(wallet);
    }
    const setupStarted = Date.now();
    // Leave room for the inserts (about 1 s per 10,000 rows on a loaded 2-core machine).
    const start = Date.now() + 5_000 + Math.ceil(options.schedules / 10);
    await insertSchedules(gateway, protocols, wallets, options, start);
    await createOneThroughApi(gateway, protocols[0].apiKey, wallets[0], start + 500);
    const total = options.schedules + 1;
    process.stdout.write(`inserted ${fmt(total)} schedules in ${fmt((Date.now() - setupStarted) / 1000, 1)} s; first due in ${fmt((start - Date.now()) / 1000, 1)} s\n`);

    const deadline = start + seconds * 1000 + 120_000;
    await sleep(Math.max(0, start - Date.now()));
    const cpuBefore = process.cpuUsage();
    let fired = 0;
    while (Date.now() < deadline) {
      await sleep(5_000);
      const [{ n, pending }] = await gateway.herald.deps.db.query<{ n: number; pending: number }>(
        `SELECT (SELECT count(*)::int FROM schedule_runs) AS n, (SELECT count(*)::int FROM schedules WHERE status = 'PENDING') AS pending`,
      );
      fired = n;
      if (Date.now() > start) process.stdout.write(`  t+${fmt((Date.now() - start) / 1000)} s: ${fmt(n)} fired, ${fmt(pending)} pending\n`);
      if (pending === 0) break;
    }
    const cpu = process.cpuUsage(cpuBefore);
    const busySeconds = (cpu.user + cpu.system) / 1e6;
    const wallSeconds = (Date.now() - start) / 1000;
    if (fired < total) process.stdout.write(`warning: only ${fmt(fired)} of ${fmt(total)} fired before the deadline\n`);
    const lag = await lagFigures(gateway);
    const [delivery] = await gateway.herald.deps.db.query<{ delivered: number; p50: number; p99: number }>(
      `SELECT count(*)::int AS delivered,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY lag) AS p50, percentile_cont(0.99) WITHIN GROUP (ORDER BY lag) AS p99
       FROM (SELECT extract(epoch FROM n.delivered_at - r.occurrence) * 1000 AS lag
             FROM schedule_runs r JOIN notifications n ON n.id = r.notification_id WHERE n.delivered_at IS NOT NULL) d`,
    );
    process.stdout.write(
      `\n| measure | value |\n|---|---:|\n` +
        `| occurrences fired | ${fmt(lag.fired)} of ${fmt(total)} |\n` +
        `| runs not queued | ${fmt(lag.failed)} |\n` +
        `| firing lag p50 | ${fmt(lag.p50, 1)} ms |\n` +
        `| firing lag p99 | ${fmt(lag.p99, 1)} ms |\n` +
        `| firing lag mean | ${fmt(lag.mean, 1)} ms |\n` +
        `| firing lag max | ${fmt(lag.max, 1)} ms |\n` +
        `| delivered by the end (capture) | ${fmt(delivery.delivered)} |\n` +
        `| occurrence → delivered p50 / p99 | ${fmt(delivery.p50 ?? 0, 1)} / ${fmt(delivery.p99 ?? 0, 1)} ms |\n` +
        `| gateway process CPU while firing | ${fmt(busySeconds, 1)} s in ${fmt(wallSeconds, 1)} s (${fmt((100 * busySeconds) / wallSeconds)}% of one core) |\n`,
    );
    process.stdout.write(`\nPostgreSQL, firing lag p99 ${fmt(lag.p99, 1)} ms (target < 1,000 ms: ${lag.p99 < 1000 && lag.fired === total ? 'met' : 'not met'})\n`);
  } finally {
    await gateway.close();
  }
}

// Standalone: `node --import tsx bench/schedules.ts`. bench/run.ts imports main() instead.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    () => process.exit(process.exitCode ?? 0),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
