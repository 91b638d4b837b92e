/**
 * Foundation: the middleware chain (auth + rate limit + request log) vs a bare Fastify route.
 *
 * Three authenticated cases, each against the same bare route in the same run:
 * - GET /v1/bench/noop: a do-nothing route the benchmark adds to the real gateway (StartOptions
 *   routes). It pays exactly what every /v1 request pays and nothing else: the key lookup
 *   through the cache, the per-protocol rate limit and its headers, the request id and the
 *   request-log record. This is the case the target is judged on.
 * - GET /v1/usage: the cheapest endpoint a client really calls, the chain plus one primary-key
 *   lookup of the month's usage row (one PostgreSQL round trip).
 * - GET /v1/requests?limit=101: the chain plus a refusal (query validation answers 400 before
 *   any SQL): what a client's mistake costs.
 *
 * Target (issue 2): auth + rate limit + request log keep at least 70% of the bare route's requests/s.
 */
import { compareCases } from './support/compare.js';
import { startBareRoute } from './support/bare-route.js';
import { createEnterpriseProtocols, ENGINE_LABELS, startBenchGateway, type Engine } from './support/gateway.js';
import { keyedRequests } from './support/load.js';
import { parseBenchOptions, type BenchOptions } from './support/options.js';
import { loadAverage, machineFacts } from './support/report.js';

const TARGET = 0.7;
const USAGE = '/v1/usage';
const NOOP = '/v1/bench/noop';
const REFUSED = '/v1/requests?limit=101';

export async function main(args: string[]): Promise<void> {
  const options = parseBenchOptions(args, {
    engines: ['pglite', 'postgres'],
    durationSec: 10,
    warmupSec: 3,
    connections: 50,
    // 500 requests/s each: room for 100,000 requests/s, above anything the bare route reaches here.
    protocols: 200,
    rounds: 1,
  });
  process.stdout.write(`## foundation: GET ${USAGE} and the middleware chain vs a bare Fastify route\n\n${machineFacts()}\n`);
  process.stdout.write(
    `load: autocannon 8 in a child process, ${options.connections} connections, ${options.warmupSec} s warm-up + ${options.durationSec} s per case, ` +
      `${options.rounds} round(s), requests spread over ${options.protocols} Enterprise protocols ` +
      `(tier limit: ${(options.protocols * 500).toLocaleString('en-US')} requests/s in all)\n`,
  );
  const bare = await startBareRoute();
  const verdicts: string[] = [];
  try {
    for (const engine of options.engines) verdicts.push(...(await measureEngine(engine, bare, options)));
  } finally {
    await bare.close();
  }
  process.stdout.write(`\nload average at end: ${loadAverage()}\n\n${verdicts.join('\n')}\n`);
}

async function measureEngine(engine: Engine, bare: { url: string; path: string }, options: BenchOptions): Promise<string[]> {
  // The API role alone: idle background loops polling the database are no part of the chain measured.
  const gateway = await startBenchGateway(engine, { HERALD_ROLE: 'api' }, { routes: (app) => app.get(NOOP, async () => ({ ok: true })) });
  try {
    const keys = (await createEnterpriseProtocols(gateway, options.protocols)).map((p) => p.apiKey);
    await expectAnswer(gateway.url, NOOP, keys[0], 200);
    await expectAnswer(gateway.url, USAGE, keys[0], 200);
    await expectAnswer(gateway.url, REFUSED, keys[0], 400);
    const rows = await compareCases(
      ENGINE_LABELS[engine],
      [
        // The bare route gets the very same requests (it simply ignores the Authorization header).
        { name: `bare Fastify GET ${bare.path}`, url: bare.url, requests: keyedRequests(keys, { method: 'GET', path: bare.path }) },
        { name: `Herald chain only (GET ${NOOP})`, url: gateway.url, requests: keyedRequests(keys, { method: 'GET', path: NOOP }) },
        { name: `Herald GET ${USAGE}`, url: gateway.url, requests: keyedRequests(keys, { method: 'GET', path: USAGE }) },
        { name: `Herald refusal (GET ${REFUSED}, 400)`, url: gateway.url, requests: keyedRequests(keys, { method: 'GET', path: REFUSED }), expectedStatus: 400 },
      ],
      options,
    );
    await gateway.herald.deps.requestLog.flush();
    const [{ n }] = await gateway.herald.deps.db.query<{ n: number }>('SELECT count(*)::int AS n FROM request_log');
    // Proof the request log really ran: one row per answered gateway request (the two checks included).
    const answered = rows.slice(1).reduce((sum, row) => sum + row.answeredAllRounds!, 2);
    process.stdout.write(`\nrequest_log rows: ${n.toLocaleString('en-US')} for ${answered.toLocaleString('en-US')} gateway requests answered\n`);
    return rows.slice(1).map((row, i) => {
      const ratio = row.shareOfBaseline;
      const verdict = i === 0 ? ` (target ${100 * TARGET}%: ${ratio >= TARGET ? 'met' : 'not met'})` : '';
      return `${ENGINE_LABELS[engine]}, ${row.name}: ${(100 * ratio).toFixed(1)}% of the bare route${verdict}`;
    });
  } finally {
    await gateway.close();
  }
}

/** One request before the load: a benchmark of 401s or 429s would measure nothing. */
async function expectAnswer(url: string, path: string, key: string, status: number) {
  const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  if (res.status !== status) throw new Error(`GET ${path} answered ${res.status}, expected ${status}: ${await res.text()}`);
  if (!res.headers.get('x-ratelimit-limit')) throw new Error(`GET ${path} answered without rate-limit headers`);
}
