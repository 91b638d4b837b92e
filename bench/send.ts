/**
 * Send path: POST /v1/notify and POST /v1/notify/bulk (100 per request) vs a bare Fastify route.
 *
 * The gateway runs with HERALD_ROLE=api (no delivery worker competing for the cores), load spread
 * over Enterprise protocols with overage on so tier limits do not cap the figure, every request to
 * a registered wallet (the full path: validation, reachability, channel choice, the notification
 * rows, the quota reservation, one transaction).
 *
 * Targets (issue 3, PostgreSQL): single sends ≥ 25 % of the bare route's requests/s with p99 < 25 ms;
 * bulk ≥ 60,000 notifications/s.
 */
import { randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import { compareCases } from './support/compare.js';
import { startBareRoute } from './support/bare-route.js';
import { ADMIN_TOKEN as ADMIN, createEnterpriseProtocols, ENGINE_LABELS, startBenchGateway, type Engine } from './support/gateway.js';
import { keyedRequests } from './support/load.js';
import { parseBenchOptions } from './support/options.js';
import { machineFacts } from './support/report.js';

async function registerWallets(url: string, count: number): Promise<string[]> {
  const wallets = Array.from({ length: count }, () => bs58.encode(randomBytes(32)));
  for (let i = 0; i < wallets.length; i += 25) {
    await Promise.all(
      wallets.slice(i, i + 25).map(async (wallet, j) => {
        const res = await fetch(`${url}/v1/admin/identities`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ wallet, email: `b${i + j}@bench.test`, telegramChatId: String(5000 + i + j) }),
        });
        if (res.status !== 201) throw new Error(`identity import: ${res.status} ${await res.text()}`);
      }),
    );
  }
  return wallets;
}

const notification = (wallet: string, i: number) => ({
  wallet,
  subject: `Position ${i} at risk`,
  body: 'Your **health factor** dropped to 1.05. [Open the app](https://app.example.com)',
  category: 'defi',
  priority: 'important',
});

export async function main(args: string[]): Promise<void> {
  const options = parseBenchOptions(args, { engines: ['postgres', 'pglite'], durationSec: 10, warmupSec: 3, connections: 50, protocols: 100, rounds: 1 });
  process.stdout.write(`## send path: POST /v1/notify and /v1/notify/bulk vs a bare Fastify route\n\n${machineFacts()}\n`);
  const bare = await startBareRoute();
  try {
    for (const engine of options.engines as Engine[]) {
      const gateway = await startBenchGateway(engine, { HERALD_ROLE: 'api' });
      try {
        const keys = (await createEnterpriseProtocols(gateway, options.protocols)).map((p) => p.apiKey);
        const wallets = await registerWallets(gateway.url, 200);
        const single = keys.map((key, i) => ({
          method: 'POST' as const,
          path: '/v1/notify',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: JSON.stringify(notification(wallets[i % wallets.length], i)),
        }));
        const bulk = keys.map((key, i) => ({
          method: 'POST' as const,
          path: '/v1/notify/bulk',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: JSON.stringify({ notifications: Array.from({ length: 100 }, (_, j) => notification(wallets[(i + j) % wallets.length], j)) }),
        }));
        const rows = await compareCases(
          ENGINE_LABELS[engine],
          [
            { name: `bare Fastify GET ${bare.path}`, url: bare.url, requests: keyedRequests(keys, { method: 'GET', path: bare.path }) },
            {
              name: `bare Fastify POST ${bare.path} (same body)`,
              url: bare.url,
              requests: single.map((request) => ({ ...request, path: bare.path })),
            },
            { name: 'Herald POST /v1/notify', url: gateway.url, requests: single },
            { name: 'Herald POST /v1/notify/bulk (100)', url: gateway.url, requests: bulk, itemsPerRequest: 100 },
          ],
          options,
        );
        const [bareRow, barePostRow, singleRow, bulkRow] = rows;
        const share = singleRow.result.requestsPerSec / bareRow.result.requestsPerSec;
        process.stdout.write(
          `\n${ENGINE_LABELS[engine]}: single sends ${(100 * share).toFixed(1)}% of the bare route (target 25%), p99 ${singleRow.result.latencyP99Ms} ms (target < 25 ms); ` +
            `a bare POST with the same body ${(100 * barePostRow.result.requestsPerSec / bareRow.result.requestsPerSec).toFixed(1)}%; ` +
            `bulk ${Math.round(bulkRow.result.requestsPerSec * 100).toLocaleString('en-US')} notifications/s (target 60,000)\n`,
        );
      } finally {
        await gateway.close();
      }
    }
  } finally {
    await bare.close();
  }
}
