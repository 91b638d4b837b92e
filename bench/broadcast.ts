/**
 * Broadcast: one POST /v1/broadcast to 1,000,000 subscribers; seconds until all are queued (target < 20 s) and until all are delivered.
 *
 * The subscribers (identities with encrypted, verified contacts, and their subscriptions) are
 * written with set-based SQL, then ANALYZEd. The clock for "queued" runs from the request to its
 * 202 answer: the fan-out, the quota reservation and the broadcast record commit in that one
 * request. The clock for "delivered" keeps running until GET /v1/broadcasts/:id counts every
 * queued message as delivered; the gateway's own delivery worker sends them through the capture
 * provider (no SMTP, Telegram or Twilio configured), which stores each rendered message.
 *
 *   node --import tsx bench/broadcast.ts [--subscribers N] [--engine postgres|pglite] [--no-deliver]
 */
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import type { SecretBox } from '../packages/server/dist/crypto/secret-box.js';
import type { Queryable } from '../packages/server/dist/db/connection.js';
import { ENGINE_LABELS, startBenchGateway, type Engine } from './support/gateway.js';
import { machineFacts } from './support/report.js';
import { atLeastOne } from './support/options.js';

const QUEUE_TARGET_S = 20;

interface Options {
  engine: Engine;
  subscribers: number;
  deliver: boolean;
  batch: string;
  concurrency: string;
  timeoutS: number;
}

function options(args: string[]): Options {
  const { values } = parseArgs({
    args,
    options: {
      engine: { type: 'string' },
      subscribers: { type: 'string' },
      'no-deliver': { type: 'boolean' },
      batch: { type: 'string' },
      concurrency: { type: 'string' },
      timeout: { type: 'string' },
    },
  });
  const engine = (values.engine ?? 'postgres') as Engine;
  if (engine !== 'postgres' && engine !== 'pglite') throw new Error(`--engine must be postgres or pglite, got "${engine}"`);
  return {
    engine,
    subscribers: atLeastOne(values.subscribers, 1_000_000),
    deliver: !values['no-deliver'],
    batch: String(atLeastOne(values.batch, 2000)),
    concurrency: String(atLeastOne(values.concurrency, 100)),
    timeoutS: atLeastOne(values.timeout, 3600),
  };
}

/**
 * `count` registered wallets subscribed to the protocol: half reachable by Telegram and email,
 * 30% by email only, 20% by SMS only. Registrations spread over the last 30 days. One ciphertext
 * per channel serves every row (the worker decrypts it like any other).
 */
export async function seedSubscribers(db: Queryable, secrets: SecretBox, protocolId: string, count: number, walletPrefix = 'bench'): Promise<void> {
  const email = secrets.encrypt('holder@example.com');
  const phone = secrets.encrypt('+15555550123');
  const chat = secrets.encrypt('424242');
  await db.query(
    `INSERT INTO identities (wallet, email_enc, email_verified_at, phone_enc, phone_verified_at, telegram_chat_enc, telegram_linked_at, created_at, updated_at)
     SELECT $1 || '-' || i,
            CASE WHEN i % 10 < 8 THEN $2 END, CASE WHEN i % 10 < 8 THEN now() END,
            CASE WHEN i % 10 >= 8 THEN $3 END, CASE WHEN i % 10 >= 8 THEN now() END,
            CASE WHEN i % 10 < 5 THEN $4 END, CASE WHEN i % 10 < 5 THEN now() END,
            now() - (i % 30) * interval '1 day', now()
     FROM generate_series(1, $5::int) AS i
     ON CONFLICT (wallet) DO NOTHING`,
    [walletPrefix, email, phone, chat, count],
  );
  await db.query(
    `INSERT INTO subscriptions (protocol_id, wallet, channels, subscribed, subscribed_at)
     SELECT $1, $2 || '-' || i,
            CASE WHEN i % 10 < 5 THEN '{email,telegram}'::text[] WHEN i % 10 < 8 THEN '{email}'::text[] ELSE '{sms}'::text[] END,
            true, now() - (i % 30) * interval '1 day'
     FROM generate_series(1, $3::int) AS i`,
    [protocolId, walletPrefix, count],
  );
  await db.query('ANALYZE identities');
  await db.query('ANALYZE subscriptions');
}

const seconds = (since: number) => (performance.now() - since) / 1000;
const fmt = (n: number) => n.toLocaleString('en-US');

export async function main(args: string[]): Promise<void> {
  const opts = options(args);
  process.stdout.write(`## broadcast: fan-out to ${fmt(opts.subscribers)} subscribers\n\n${machineFacts()}\n`);
  process.stdout.write(`worker: batch ${opts.batch}, concurrency ${opts.concurrency} per channel, capture provider on every channel\n\n`);
  const gateway = await startBenchGateway(opts.engine, {
    HERALD_WORKER_BATCH: opts.batch,
    HERALD_WORKER_CONCURRENCY: opts.concurrency,
    HERALD_WORKER_POLL_MS: '100',
  });
  try {
    const protocol = await gateway.createProtocol({ tier: 3, overageEnabled: true, name: 'Bench broadcaster' });
    const db = gateway.herald.deps.db;
    let started = performance.now();
    await seedSubscribers(db, gateway.herald.deps.secrets, protocol.id, opts.subscribers);
    process.stdout.write(`### ${ENGINE_LABELS[opts.engine]}\nseeded ${fmt(opts.subscribers)} identities and subscriptions in ${seconds(started).toFixed(1)} s\n`);

    started = performance.now();
    const res = await fetch(`${gateway.url}/v1/broadcast`, {
      method: 'POST',
      headers: { authorization: `Bearer ${protocol.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ subject: 'Protocol upgrade tonight', body: 'Read [the notes](https://example.com/notes).', category: 'governance' }),
    });
    const queuedS = seconds(started);
    const answer = (await res.json()) as { broadcast_id: string; queued_count: number; total_subscribers: number; estimated_delivery_s: number };
    if (res.status !== 202) throw new Error(`broadcast failed: ${res.status} ${JSON.stringify(answer)}`);
    process.stdout.write(
      `all queued: ${fmt(answer.queued_count)} of ${fmt(answer.total_subscribers)} subscribers in ${queuedS.toFixed(2)} s ` +
        `(${fmt(Math.round(answer.queued_count / queuedS))} notifications/s; target < ${QUEUE_TARGET_S} s: ${queuedS < QUEUE_TARGET_S ? 'met' : 'not met'}); ` +
        `estimated_delivery_s answered: ${fmt(answer.estimated_delivery_s)}\n`,
    );
    if (opts.deliver) await waitForDelivery(gateway.url, protocol.apiKey, answer, started, opts.timeoutS);
  } finally {
    await gateway.close();
  }
}

async function waitForDelivery(url: string, key: string, answer: { broadcast_id: string; queued_count: number }, started: number, timeoutS: number) {
  const countsLatencies: number[] = [];
  let lastPrint = performance.now();
  for (;;) {
    const asked = performance.now();
    const res = await fetch(`${url}/v1/broadcasts/${answer.broadcast_id}`, { headers: { authorization: `Bearer ${key}` } });
    const body = (await res.json()) as { counts: Record<string, number> };
    countsLatencies.push(performance.now() - asked);
    const { delivered, failed, bounced } = body.counts;
    if (delivered + failed + bounced >= answer.queued_count) {
      const total = seconds(started);
      const sorted = [...countsLatencies].sort((a, b) => a - b);
      process.stdout.write(
        `all delivered: ${fmt(delivered)} delivered, ${fmt(failed)} failed, ${fmt(bounced)} bounced, ${total.toFixed(1)} s after the request ` +
          `(${fmt(Math.round(answer.queued_count / total))} messages/s end to end)\n` +
          `GET /v1/broadcasts/:id while delivering: median ${sorted[Math.floor(sorted.length / 2)].toFixed(0)} ms, max ${sorted[sorted.length - 1].toFixed(0)} ms over ${sorted.length} calls\n`,
      );
      return;
    }
    if (seconds(started) > timeoutS) throw new Error(`not delivered within ${timeoutS} s: ${JSON.stringify(body.counts)}`);
    if (performance.now() - lastPrint > 15_000) {
      process.stdout.write(`  … ${seconds(started).toFixed(0)} s: ${JSON.stringify(body.counts)}\n`);
      lastPrint = performance.now();
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main(process.argv.slice(2)).then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
