/**
 * Delivery: queued → delivered per second on PostgreSQL (capture provider, then local SMTP / Telegram / Twilio servers), and queue lag p50/p99.
 *
 * Phase 1 (drain): N notifications are queued with one set-based INSERT while no worker runs; then a
 * worker process role (an in-process Herald with HERALD_ROLE=worker) starts and the time until all
 * are delivered gives deliveries per second.
 * Phase 2 (steady): the worker runs while notifications arrive through POST /v1/notify/bulk at a
 * fixed rate; queue lag = delivered_at − created_at, p50 and p99.
 * Phase 3: phase 1 again with the real protocol servers of the test suite on 127.0.0.1.
 *
 * Target (issue 4): ≥ 5,000 deliveries/s with the capture provider.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import bs58 from 'bs58';
import pg from 'pg';
import { loadConfig } from '../packages/server/dist/config.js';
import { startHerald, type Herald } from '../packages/server/dist/runtime.js';
import { startSmtpServer } from '../test/support/smtp-server.js';
import { startTelegramApi } from '../test/support/telegram-api.js';
import { startTwilioApi } from '../test/support/twilio-api.js';
import { machineFacts, postgresCpuSeconds } from './support/report.js';
import { databaseUrl } from './support/gateway.js';

const ADMIN = 'bench-admin-token-0123456789';

async function admin(url: string, path: string, body: unknown) {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<any>;
}

async function schema(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `bench_${randomBytes(6).toString('hex')}`;
  const c = new pg.Client({ connectionString: databaseUrl() });
  await c.connect();
  await c.query(`CREATE SCHEMA ${name}`);
  await c.end();
  const url = new URL(databaseUrl());
  url.searchParams.set('options', `-c search_path=${name}`);
  return {
    url: url.toString(),
    async drop() {
      const d = new pg.Client({ connectionString: databaseUrl() });
      await d.connect();
      await d.query(`DROP SCHEMA ${name} CASCADE`);
      await d.end();
    },
  };
}

function env(dbUrl: string, key: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    DATABASE_URL: dbUrl,
    HERALD_ENCRYPTION_KEY: key,
    HERALD_ADMIN_TOKEN: ADMIN,
    HERALD_IP_RATE_LIMIT: '100000',
    HERALD_WORKER_POLL_MS: '20',
    ...workerTuning,
    ...extra,
  };
}

/** Worker settings under test (`--batch`, `--loops`); the defaults of the gateway otherwise. */
const workerTuning: Record<string, string> = {};

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function seed(api: Herald, url: string, count: number, wallets: number): Promise<string> {
  const protocol = await admin(url, '/v1/admin/protocols', { name: 'Bench', tier: 3, overageEnabled: true });
  const addresses: string[] = [];
  for (let i = 0; i < wallets; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, wallets - i) }, async (_, j) => {
        const wallet = bs58.encode(randomBytes(32));
        addresses.push(wallet);
        const n = i + j;
        await admin(url, '/v1/admin/identities', { wallet, email: `w${n}@bench.test`, phone: `+1555${String(1000000 + n)}`, telegramChatId: String(100000 + n) });
      }),
    );
  }
  await api.deps.db.query(
    `INSERT INTO notifications (id, protocol_id, environment, wallet, subject, body, category, channel, status, payload_hash, next_attempt_at, created_at, updated_at)
     SELECT lpad(to_hex(g), 26, '0'), $1, 'production', ($2::text[])[1 + g % $3], 'Bench ' || g, 'Delivery **benchmark** message ' || g, 'system',
            (ARRAY['email', 'telegram', 'sms'])[1 + g % 3], 'queued', 'bench', now(), now(), now()
     FROM generate_series(1, $4) AS g`,
    [protocol.id, addresses, addresses.length, count],
  );
  return protocol.apiKey as string;
}

async function drain(label: string, count: number, extraEnv: Record<string, string> = {}) {
  const s = await schema();
  const key = randomBytes(32).toString('hex');
  const api = await startHerald(loadConfig(env(s.url, key, { HERALD_ROLE: 'api', ...extraEnv })), { announce: () => {} });
  try {
    await seed(api, api.url!, count, 300);
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    const pgBefore = postgresCpuSeconds();
    const worker = await startHerald(loadConfig(env(s.url, key, { HERALD_ROLE: 'worker', ...extraEnv })), { announce: () => {} });
    let delivered = 0;
    while (delivered < count) {
      await new Promise((r) => setTimeout(r, 200));
      [{ delivered }] = await api.deps.db.query<{ delivered: number }>(`SELECT count(*)::int AS delivered FROM notifications WHERE status <> 'queued' AND status <> 'sending'`);
      if (performance.now() - started > 600_000) throw new Error('drain took over 10 minutes');
    }
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const pgAfter = postgresCpuSeconds();
    await worker.close();
    // This process holds the worker (and an idle API polling the count); PostgreSQL's own processes are read from /proc.
    const gatewayMicros = (cpu.user + cpu.system) / count;
    const pgMicros = pgBefore !== undefined && pgAfter !== undefined ? ((pgAfter - pgBefore) * 1e6) / count : NaN;
    const [{ failed }] = await api.deps.db.query<{ failed: number }>(`SELECT count(*)::int AS failed FROM notifications WHERE status <> 'delivered'`);
    process.stdout.write(
      `| ${label} | ${count.toLocaleString('en-US')} | ${seconds.toFixed(1)} s | **${Math.round(count / seconds).toLocaleString('en-US')} /s** | ${Math.round(gatewayMicros)} | ${Number.isNaN(pgMicros) ? 'n/a' : Math.round(pgMicros)} | ${failed} |\n`,
    );
  } finally {
    await api.close();
    await s.drop();
  }
}

async function steady(rate: number, seconds: number) {
  const s = await schema();
  const key = randomBytes(32).toString('hex');
  const herald = await startHerald(loadConfig(env(s.url, key)), { announce: () => {} });
  try {
    const apiKey = await seed(herald, herald.url!, 0, 300);
    const wallets = (await herald.deps.db.query<{ wallet: string }>('SELECT wallet FROM identities')).map((r) => r.wallet);
    const perTick = Math.max(1, Math.round(rate / 10));
    const end = performance.now() + seconds * 1000;
    let sent = 0;
    while (performance.now() < end) {
      const tick = performance.now();
      const notifications = Array.from({ length: perTick }, (_, i) => ({
        wallet: wallets[(sent + i) % wallets.length],
        subject: `Steady ${sent + i}`,
        body: 'Queue lag benchmark',
        category: 'system',
        preferredChannel: ['email', 'telegram', 'sms'][(sent + i) % 3],
      }));
      for (let i = 0; i < notifications.length; i += 100) {
        const res = await fetch(`${herald.url}/v1/notify/bulk`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ notifications: notifications.slice(i, i + 100) }),
        });
        if (res.status !== 202) throw new Error(`bulk: ${res.status} ${await res.text()}`);
      }
      sent += perTick;
      await new Promise((r) => setTimeout(r, Math.max(0, 100 - (performance.now() - tick))));
    }
    let open = 1;
    while (open > 0) {
      await new Promise((r) => setTimeout(r, 200));
      [{ open }] = await herald.deps.db.query<{ open: number }>(`SELECT count(*)::int AS open FROM notifications WHERE status IN ('queued', 'sending')`);
    }
    const lags = (
      await herald.deps.db.query<{ lag: number }>(`SELECT extract(epoch FROM (delivered_at - created_at)) * 1000 AS lag FROM notifications WHERE delivered_at IS NOT NULL`)
    )
      .map((r) => Number(r.lag))
      .sort((a, b) => a - b);
    process.stdout.write(
      `| ${rate.toLocaleString('en-US')} /s offered for ${seconds} s | ${sent.toLocaleString('en-US')} | ${Math.round(pct(lags, 50))} ms | ${Math.round(pct(lags, 99))} ms | ${Math.round(lags[lags.length - 1])} ms |\n`,
    );
  } finally {
    await herald.close();
    await s.drop();
  }
}

export async function main(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { batch: { type: 'string' }, loops: { type: 'string' }, count: { type: 'string', default: '50000' }, 'real-count': { type: 'string', default: '6000' }, rate: { type: 'string', default: '2000' }, seconds: { type: 'string', default: '15' } },
  });
  const count = Number(values.count);
  if (values.batch) workerTuning.HERALD_WORKER_BATCH = values.batch;
  if (values.loops) workerTuning.HERALD_WORKER_LOOPS = values.loops;
  process.stdout.write(`## delivery: queued → delivered on PostgreSQL\n\n${machineFacts()}\nworker: ${JSON.stringify(workerTuning)} (gateway defaults otherwise)\n\n`);
  process.stdout.write('| provider | notifications | drain time | deliveries/s | gateway CPU µs/delivery | PostgreSQL CPU µs/delivery | not delivered |\n|---|---|---|---|---|---|---|\n');
  await drain('capture', count);
  const [smtp, telegram, twilio] = await Promise.all([startSmtpServer(), startTelegramApi(), startTwilioApi()]);
  try {
    await drain('local SMTP + Telegram + Twilio', Number(values['real-count']), {
      SMTP_URL: `${smtp.url}${smtp.url.includes('?') ? '&' : '?'}maxConnections=20`,
      EMAIL_FROM: 'Bench <bench@herald.test>',
      TELEGRAM_BOT_TOKEN: telegram.token,
      TELEGRAM_API_URL: telegram.url,
      TELEGRAM_RATE_LIMIT: '10000',
      TWILIO_ACCOUNT_SID: twilio.accountSid,
      TWILIO_AUTH_TOKEN: twilio.authToken,
      TWILIO_FROM: '+15005550006',
      TWILIO_API_URL: twilio.url,
    });
  } finally {
    await Promise.all([smtp.close(), telegram.close(), twilio.close()]);
  }
  process.stdout.write('\n| steady load (capture) | sent | lag p50 | lag p99 | lag max |\n|---|---|---|---|---|\n');
  await steady(Number(values.rate), Number(values.seconds));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).then(
    () => process.exit(0),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
