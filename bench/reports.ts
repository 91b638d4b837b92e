/**
 * Reports: GET /v1/analytics, /v1/engagement and /v1/audience over 1,000,000 notifications of one protocol (target < 200 ms each).
 *
 * Seeded with set-based SQL (generate_series), then VACUUM ANALYZE (as autovacuum would leave the
 * tables): 1,000,000 notifications of the measured protocol spread over the last 90 days (60%
 * email, 85% delivered, 5% failed, 3% bounced, 3% opted out, the rest queued; 5% sandbox), their
 * engagement events (a quarter of delivered emails opened, 1 in 20 clicked, 1 in 200
 * unsubscribed), 200,000 notifications of another protocol, and 1,000,000 subscribers for the
 * audience report. The reports read the counter tables that triggers keep (migration 005), so the
 * seeding pays for them too. Each case is asked over HTTP, sequentially, after a warm-up; the
 * latency is the client's (request sent to answer read).
 *
 *   node --import tsx bench/reports.ts [--notifications N] [--subscribers N] [--requests N] [--engine postgres|pglite]
 */
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import type { Queryable } from '../packages/server/dist/db/connection.js';
import { seedSubscribers } from './broadcast.js';
import { ENGINE_LABELS, startBenchGateway, type Engine } from './support/gateway.js';
import { machineFacts } from './support/report.js';
import { atLeastOne } from './support/options.js';

const TARGET_MS = 200;
const fmt = (n: number) => n.toLocaleString('en-US');

function options(args: string[]) {
  const { values } = parseArgs({
    args,
    options: {
      engine: { type: 'string' },
      notifications: { type: 'string' },
      subscribers: { type: 'string' },
      requests: { type: 'string' },
    },
  });
  const engine = (values.engine ?? 'postgres') as Engine;
  if (engine !== 'postgres' && engine !== 'pglite') throw new Error(`--engine must be postgres or pglite, got "${engine}"`);
  return {
    engine,
    notifications: atLeastOne(values.notifications, 1_000_000),
    subscribers: atLeastOne(values.subscribers, 1_000_000),
    requests: atLeastOne(values.requests, 30),
  };
}

const DELIVERED_EMAIL = 'i % 10 < 6 AND i % 100 < 85';

async function seedNotifications(db: Queryable, protocolId: string, count: number, idPrefix: string): Promise<void> {
  await db.query(
    `INSERT INTO notifications (id, protocol_id, environment, wallet, subject, body, category, channel, status, payload_hash, delivered_at, created_at, updated_at)
     SELECT $2 || lpad(i::text, 10, '0'), $1, CASE WHEN i % 20 = 19 THEN 'sandbox' ELSE 'production' END, 'bench-' || (i % 100000),
            'Position update', 'Your position changed.', 'defi',
            CASE WHEN i % 10 < 6 THEN 'email' WHEN i % 10 < 9 THEN 'telegram' ELSE 'sms' END,
            CASE WHEN i % 100 < 85 THEN 'delivered' WHEN i % 100 < 90 THEN 'failed' WHEN i % 100 < 93 THEN 'bounced'
                 WHEN i % 100 < 96 THEN 'opted_out' ELSE 'queued' END,
            'bench', CASE WHEN i % 100 < 85 THEN t END, t, t
     FROM generate_series(1, $3::int) AS i, LATERAL (SELECT now() - (i % 90) * interval '1 day' - (i % 86400) * interval '1 second' AS t) AS at`,
    [protocolId, idPrefix, count],
  );
}

async function seedEngagement(db: Queryable, protocolId: string, count: number, idPrefix: string): Promise<void> {
  await db.query(
    `INSERT INTO engagement_events (protocol_id, notification_id, wallet, kind, created_at)
     SELECT $1, $2 || lpad(i::text, 10, '0'), 'bench-' || (i % 100000), k.kind,
            now() - (i % 90) * interval '1 day' - (i % 86400) * interval '1 second' + interval '1 hour'
     FROM generate_series(1, $3::int) AS i
     JOIN (VALUES ('open', 4), ('click', 20), ('unsubscribe', 200)) AS k(kind, every) ON (i / 10) % k.every = 0
     WHERE ${DELIVERED_EMAIL}`,
    [protocolId, idPrefix, count],
  );
}

interface Case {
  name: string;
  path: string;
}

async function measure(url: string, key: string, path: string, requests: number): Promise<number[]> {
  const ask = async () => {
    const started = performance.now();
    const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${key}` } });
    await res.text();
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
    return performance.now() - started;
  };
  for (let i = 0; i < 3; i++) await ask();
  const times: number[] = [];
  for (let i = 0; i < requests; i++) times.push(await ask());
  return times.sort((a, b) => a - b);
}

export async function main(args: string[]): Promise<void> {
  const opts = options(args);
  process.stdout.write(`## reports over ${fmt(opts.notifications)} notifications and ${fmt(opts.subscribers)} subscribers\n\n${machineFacts()}\n\n`);
  // The api role only: no worker changes the seeded rows while they are measured.
  const gateway = await startBenchGateway(opts.engine, { HERALD_ROLE: 'api' });
  try {
    const db = gateway.herald.deps.db;
    const protocol = await gateway.createProtocol({ tier: 3, name: 'Bench reporter' });
    const other = await gateway.createProtocol({ tier: 3, name: 'Bench neighbour' });
    const started = performance.now();
    await seedNotifications(db, protocol.id, opts.notifications, 'bench');
    await seedNotifications(db, other.id, Math.round(opts.notifications / 5), 'noise');
    await seedEngagement(db, protocol.id, opts.notifications, 'bench');
    await seedSubscribers(db, gateway.herald.deps.secrets, protocol.id, opts.subscribers, 'aud');
    for (const table of ['notifications', 'engagement_events', 'subscriptions', 'identities']) await db.query(`VACUUM ANALYZE ${table}`);
    const [sizes] = await db.query<Record<string, number>>(
      `SELECT (SELECT count(*) FROM engagement_events)::int AS events,
              (SELECT count(*) FROM notification_counts WHERE protocol_id = $1)::int AS notification_counts,
              (SELECT count(*) FROM engagement_counts WHERE protocol_id = $1)::int AS engagement_counts,
              (SELECT count(*) FROM audience_counts WHERE protocol_id = $1)::int AS audience_counts`,
      [protocol.id],
    );
    process.stdout.write(
      `### ${ENGINE_LABELS[opts.engine]}\nseeded in ${((performance.now() - started) / 1000).toFixed(1)} s ` +
        `(${fmt(sizes.events)} engagement events); counter rows the reports read for this protocol: ` +
        `notification_counts ${fmt(sizes.notification_counts)}, engagement_counts ${fmt(sizes.engagement_counts)}, audience_counts ${fmt(sizes.audience_counts)}\n` +
        `${opts.requests} sequential requests per case after 3 warm-ups\n\n`,
    );

    const cases: Case[] = [
      { name: 'analytics 7d', path: '/v1/analytics?period=7d' },
      { name: 'analytics 30d (default)', path: '/v1/analytics' },
      { name: 'analytics 90d', path: '/v1/analytics?period=90d' },
      { name: 'engagement, last 30 days (default)', path: '/v1/engagement' },
      { name: 'engagement, 90 days', path: `/v1/engagement?startDate=${new Date(Date.now() - 90 * 86_400_000).toISOString().slice(0, 10)}` },
      { name: 'audience', path: '/v1/audience' },
    ];
    const lines = ['| case | median ms | p95 ms | max ms | target |', '|---|---:|---:|---:|---|'];
    for (const c of cases) {
      const times = await measure(gateway.url, protocol.apiKey, c.path, opts.requests);
      const p = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))];
      lines.push(`| ${c.name} | ${p(0.5).toFixed(1)} | ${p(0.95).toFixed(1)} | ${times[times.length - 1].toFixed(1)} | ${p(0.95) < TARGET_MS ? 'met' : 'not met'} (p95 < ${TARGET_MS} ms) |`);
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await gateway.close();
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
