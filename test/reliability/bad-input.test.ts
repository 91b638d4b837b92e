/**
 * Bad input at volume: property-based (fast-check) requests against every route of the gateway,
 * each possibly wrong in every way a client can be wrong. The server, a separate process, never
 * answers 5xx, never hangs, answers every error with exactly the contract's body, and its
 * resident memory stays flat. HERALD_FUZZ_SEED=<n> replays a run.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { ERROR_STATUS } from '../../packages/server/src/http/errors.js';
import { ensureBuilt, killStrays } from '../foundation/server-process.js';
import { ADMIN_TOKEN, ENCRYPTION_KEY, call, createProtocol, freshSchema, onPostgres, type TestProtocol } from '../support/gateway.js';
import { registeredWallet } from '../support/wallets.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { badRequest, describeRequest, type BadRequest } from './support/bad-requests.js';
import { routesFrom, type Fixtures, type RouteSpec } from './support/route-table.js';
import { Cluster, isAlive, logEntries, type Node } from './support/cluster.js';
import { isContractError } from './support/contract-error.js';
import { SIZES, SOAK, TEST_TIMEOUT_MS } from './support/mode.js';
import { memoryOf } from './support/proc-memory.js';
import { rawRequest, type RawOutcome } from './support/raw-http.js';

/** A JSON-RPC error, or a batch's array of them (every member invalid). */
function isJsonRpcError(text: string): boolean {
  const isError = (body: any) => body?.jsonrpc === '2.0' && 'id' in body && Number.isInteger(body.error?.code) && typeof body.error?.message === 'string';
  try {
    const body = JSON.parse(text);
    return Array.isArray(body) ? body.length > 0 && body.every(isError) : isError(body);
  } catch {
    return false;
  }
}

const BROWSER_PAGES = /^(GET|POST) \/(unsubscribe|track)\//;

/** The server's V8 old-space cap during the run (production runs have no cap set by Herald). */
const HEAP_MB = 128;
/** Growth of resident memory allowed between the end of the warm-up and the end of the run. */
const FLAT_MB = 48;

describe('bad input at volume', { timeout: TEST_TIMEOUT_MS }, () => {
  let cluster: Cluster;
  let server: Node;
  let port: number;
  let receiver: Receiver;
  let fixtures: Fixtures;
  let routes: RouteSpec[];
  let dataDir: string | undefined;
  let drop: (() => Promise<void>) | undefined;

  before(async () => {
    ensureBuilt();
    receiver = await startReceiver();
    const schema = onPostgres ? await freshSchema() : undefined;
    drop = schema?.drop;
    // On disk rather than in memory, so rows the run creates do not count as the server's memory.
    dataDir = schema ? undefined : mkdtempSync(path.join(tmpdir(), 'herald-fuzz-'));
    cluster = new Cluster({
      ...(schema ? { DATABASE_URL: schema.url } : { HERALD_DATA_DIR: dataDir! }),
      ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL, HERALD_REDIS_PREFIX: `fuzz${Date.now()}:` } : {}),
      HERALD_ENCRYPTION_KEY: ENCRYPTION_KEY,
      HERALD_ADMIN_TOKEN: ADMIN_TOKEN,
      HERALD_ALLOW_PRIVATE_WEBHOOKS: 'true',
      HERALD_WEBHOOK_TIMEOUT_MS: '1000',
      // Requests without a valid key count per client address; the fuzzer is one address.
      HERALD_IP_RATE_LIMIT: '100000',
      // A capped heap makes V8 collect rather than grow lazily: resident memory then follows live
      // memory, and a leak shows as growth (or an out-of-memory exit) instead of hiding in slack.
      NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}`,
    });
    server = await cluster.start('api');
    const url = server.url!;
    port = Number(new URL(url).port);
    const owner: TestProtocol = await createProtocol(url, { tier: 3, overageEnabled: true, name: 'Fuzz' });
    const other: TestProtocol = await createProtocol(url, { tier: 0, name: 'Other' });
    const wallet = await registeredWallet(url);
    const ids = [owner.id, other.id];
    const made = async (method: string, route: string, body: unknown, pick: (b: any) => string) => {
      const res = await call(url, owner.apiKey, method, route, body);
      assert.ok(res.status < 300, `${route}: ${res.status} ${JSON.stringify(res.body)}`);
      ids.push(pick(res.body));
    };
    const note = { wallet, subject: 'Fuzz fixture', body: 'Hello', category: 'system' };
    await made('POST', '/v1/notify', note, (b) => b.notificationId);
    await made('POST', '/v1/schedule', { ...note, scheduledFor: new Date(Date.now() + 86_400_000).toISOString(), timezone: 'UTC' }, (b) => b.id);
    await made('POST', '/v1/webhooks', { url: `${receiver.url}/hook`, events: ['notification.delivered'] }, (b) => b.id);
    await made(
      'POST',
      '/v1/templates/email',
      { name: 'fuzz', category: 'system', subjectTemplate: 'Hi {{name}}', htmlSource: '<p>{{name}}</p>', textSource: '{{name}}', serviceFooter: 'minimal' },
      (b) => b.templateId,
    );
    await made('POST', '/v1/subscriptions', { walletAddress: wallet, channels: ['email'] }, (b) => b.walletAddress);
    fixtures = { apiKey: owner.apiKey, sandboxKey: owner.sandboxApiKey, adminToken: ADMIN_TOKEN, wallet, ids, receiverUrl: `${receiver.url}/hook` };
    routes = routesFrom((await call(url, undefined, 'GET', '/openapi.json')).body);
  });

  after(async () => {
    await cluster?.stop().catch(() => {});
    await killStrays();
    await receiver?.close();
    await drop?.();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** What is wrong with the server's answer to `request` (nothing, for a well-behaved server). */
  function problemsOf(request: BadRequest, outcome: RawOutcome): string[] {
    const problems: string[] = [];
    if (outcome.timedOut) problems.push('no answer within 15 s');
    if (outcome.unparsed) problems.push(`bytes that are not an HTTP response: ${JSON.stringify(outcome.unparsed)}`);
    // A client that declared a longer body and stopped sending has left; the server may just close.
    // A server refusing a large body early closes with it unread: the reset can discard its answer.
    const mayBeSilent = request.framing === 'long' || (request.body?.length ?? 0) > 65_536;
    if (outcome.responses.length === 0 && !mayBeSilent) problems.push('connection closed without an answer');
    for (const response of outcome.responses) {
      if (response.status >= 500) problems.push(`${response.status}: ${response.body.slice(0, 300)}`);
      if (response.status < 400 || request.method === 'HEAD') continue;
      // Links in emails open pages for people: their refusals are HTML pages, not API errors.
      if (BROWSER_PAGES.test(request.route) && response.headers['content-type']?.startsWith('text/html')) continue;
      // The documentation endpoint speaks JSON-RPC 2.0, errors included (the contract says so).
      if (request.route === 'POST /mcp' && isJsonRpcError(response.body)) continue;
      const code = (() => {
        try {
          return JSON.parse(response.body).code as string;
        } catch {
          return undefined;
        }
      })();
      if (!isContractError(response.status, response.body)) problems.push(`${response.status} without the contract's error body: ${response.body.slice(0, 300)}`);
      else if ((ERROR_STATUS as Record<string, number>)[code!] !== response.status) problems.push(`${response.status} with code ${code}, which is not that status's code`);
    }
    return problems;
  }

  it('answers every generated request without a 5xx, a hang or a body outside the contract, in flat memory', { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const total = SIZES.badRequests;
    const warmup = Math.max(150, Math.floor(total / 10));
    const statuses = new Map<number, number>();
    const routesHit = new Set<string>();
    const samples: number[] = [];
    let runs = 0;
    let fiveHundreds = 0;
    let badBodies = 0;
    let silent = 0;
    let maxMs = 0;
    let baselineMb = 0;
    const seed = process.env.HERALD_FUZZ_SEED ? Number(process.env.HERALD_FUZZ_SEED) : Date.now() % 2 ** 31;

    const property = fc.asyncProperty(badRequest(routes, fixtures), async (request) => {
      runs += 1;
      const outcome = await rawRequest(port, { ...request, timeoutMs: 15_000 });
      routesHit.add(request.route);
      maxMs = Math.max(maxMs, outcome.ms);
      if (outcome.responses.length === 0) silent += 1;
      for (const response of outcome.responses) {
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        if (response.status >= 500) fiveHundreds += 1;
      }
      if (runs === warmup) baselineMb = memoryOf(server.current.pid).rssMb;
      if (runs % 100 === 0) samples.push(memoryOf(server.current.pid).rssMb);
      const problems = problemsOf(request, outcome);
      if (problems.some((p) => p.includes('contract'))) badBodies += 1;
      if (problems.length) throw new Error(`${describeRequest(request)}: ${problems.join('; ')}`);
    });
    const details = await fc.check(property, { numRuns: total, seed, endOnFailure: !SOAK });
    const end = memoryOf(server.current.pid);
    const unhandled = logEntries(server.current).filter((e) => e.msg === 'unhandled error' || e.level >= 60);
    const health = await call(server.url!, undefined, 'GET', '/health');

    t.diagnostic(
      `bad-input figures: ${JSON.stringify({
        mode: SOAK ? 'soak' : 'short',
        seed,
        requests: runs,
        routes: `${routesHit.size}/${routes.length}`,
        statuses: Object.fromEntries([...statuses].sort(([a], [b]) => a - b)),
        fiveHundreds,
        badErrorBodies: badBodies,
        closedWithoutAnswer: silent,
        maxLatencyMs: maxMs,
        memoryMb: { heapCap: HEAP_MB, afterWarmup: baselineMb, end: end.rssMb, peak: end.peakMb, samples },
        unhandledErrorLogs: unhandled.length,
      })}`,
    );

    assert.ok(!details.failed, `${(details.errorInstance as Error | undefined)?.message}\n${fc.defaultReportMessage(details)}`);
    assert.equal(fiveHundreds, 0);
    assert.equal(unhandled.length, 0, `no unhandled errors logged: ${JSON.stringify(unhandled.slice(0, 3))}`);
    assert.ok(isAlive(server.current) && health.status === 200, 'the server is up and healthy afterwards');
    assert.ok(routesHit.size >= routes.length * 0.9, `most routes were hit (${routesHit.size} of ${routes.length})`);
    assert.ok(end.rssMb - baselineMb <= FLAT_MB, `resident memory grew ${end.rssMb - baselineMb} MB after the warm-up (limit ${FLAT_MB} MB)`);
  });
});
