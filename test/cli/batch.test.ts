import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { call, startGateway, waitFor, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { registeredWallet } from '../support/wallets.js';
import { ensureBuilt, hasScript, onTerminal, runCli, scratchHome } from './run-cli.js';

const RESULT_KEYS = ['deliveryChannel', 'estimatedDeliveryMs', 'index', 'notificationId', 'recipientRegistered', 'status'];

// api role: nothing is delivered, so every count below is of rows the batch itself created.
describe('herald notify batch', () => {
  let gw: TestGateway;
  let wallet: string;
  let scratch: ReturnType<typeof scratchHome>;
  let baseEnv: Record<string, string>;

  const items = (count: number, extra: (i: number) => object = () => ({})) =>
    Array.from({ length: count }, (_, i) => ({ wallet, subject: `Item ${i}`, body: 'Batch body', category: 'defi', ...extra(i) }));
  const writeBatch = (name: string, batch: unknown) => {
    const file = path.join(scratch.home, name);
    writeFileSync(file, JSON.stringify(batch));
    return file;
  };
  const sentBy = async (protocol: TestProtocol) => (await call(gw.url, protocol.apiKey, 'GET', '/v1/notifications?limit=1')).body.total as number;
  const cli = (protocol: TestProtocol | undefined, args: string[], input?: string) =>
    runCli(['notify', 'batch', ...args], { env: { ...baseEnv, ...(protocol ? { HERALD_API_KEY: protocol.apiKey } : {}) }, input });

  before(async () => {
    ensureBuilt();
    gw = await startGateway({ env: { HERALD_ROLE: 'api', HERALD_IP_RATE_LIMIT: '10000', HERALD_REQUEST_LOG_FLUSH_MS: '20' } });
    wallet = await registeredWallet(gw.url, { email: 'holder@example.com' });
    scratch = scratchHome();
    baseEnv = { HOME: scratch.home, XDG_CONFIG_HOME: scratch.config, HERALD_BASE_URL: gw.url };
  });
  after(async () => {
    await gw.close();
    scratch.cleanup();
  });

  it('sends 150 items in 2 bulk requests, keyed <key>-<i>; a re-run answers duplicate for each', async () => {
    const acme = await gw.createProtocol({ tier: 3 });
    const file = writeBatch('150.json', items(150));
    const res = await cli(acme, ['--file', file, '--yes', '--idempotency-key', 'run-1', '--json']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stderr, '', 'no progress bar or notes off a terminal');
    const results = res.json();
    assert.equal(results.length, 150);
    results.forEach((result: any, i: number) => {
      assert.deepEqual(Object.keys(result).sort(), RESULT_KEYS);
      assert.equal(result.index, i);
      assert.equal(result.status, 'queued');
    });
    const bulkCalls = await waitFor(async () => {
      const log = await call(gw.url, acme.apiKey, 'GET', '/v1/requests?endpoint=/v1/notify/bulk');
      return log.body.total === 2 ? log.body.items : undefined;
    });
    assert.ok(bulkCalls.every((entry: any) => entry.statusCode === 202 && entry.method === 'POST'));
    const [first, last] = await Promise.all(
      [results[0], results[149]].map((r: any) => gw.herald.deps.db.query<{ idempotency_key: string; subject: string }>('SELECT idempotency_key, subject FROM notifications WHERE id = $1', [r.notificationId])),
    );
    assert.deepEqual(first[0], { idempotency_key: 'run-1-0', subject: 'Item 0' });
    assert.deepEqual(last[0], { idempotency_key: 'run-1-149', subject: 'Item 149' });

    const again = await cli(acme, ['--from-stdin', '--yes', '--idempotency-key', 'run-1', '--json'], readFileSync(file, 'utf8'));
    assert.equal(again.code, 0, again.stderr);
    const repeated = again.json();
    assert.ok(repeated.every((r: any, i: number) => r.status === 'duplicate' && r.notificationId === results[i].notificationId));
    assert.equal(await sentBy(acme), 150);

    const human = await cli(acme, ['--file', file, '--yes', '--idempotency-key', 'run-1']);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /^150 notifications in 2 requests: 150 duplicate$/m);
  });

  it('refuses to send without --yes when it cannot ask (exit 2), sending nothing', async () => {
    const acme = await gw.createProtocol({ tier: 3 });
    const file = writeBatch('3.json', items(3));
    const piped = await cli(acme, ['--file', file]);
    assert.equal(piped.code, 2);
    assert.match(piped.stderr, /needs confirmation: pass --yes/);
    const json = await cli(acme, ['--file', file, '--json']);
    assert.equal(json.code, 2);
    assert.equal(json.stdout, '');
    assert.equal(json.errorJson().error.code, 'USAGE');
    assert.equal(await sentBy(acme), 0);
  });

  it('--dry-run checks every item and prints the plan, sending nothing and needing no key', async () => {
    const file = writeBatch('dry.json', items(120));
    const res = await cli(undefined, ['--file', file, '--dry-run', '--idempotency-key', 'dry', '--json']);
    assert.equal(res.code, 0, res.stderr);
    const plan = res.json();
    assert.deepEqual([plan.dryRun, plan.count, plan.requests], [true, 120, 2]);
    assert.equal(plan.notifications[119].idempotencyKey, 'dry-119');
    assert.equal(plan.notifications[0].subject, 'Item 0');
    const human = await cli(undefined, ['--file', file, '--dry-run']);
    assert.match(human.stdout, /Dry run: 120 valid notifications to 1 wallet would go in 2 requests; nothing was sent/);
    assert.match(human.stdout, /… and 100 more/);
    const log = await gw.herald.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM notifications WHERE subject = 'Item 119' AND idempotency_key = 'dry-119'`);
    assert.equal(log[0].n, 0);
  });

  it('refuses a batch with bad items, naming each (exit 2), and bad input', async () => {
    const acme = await gw.createProtocol({ tier: 3 });
    const bad = items(5, (i) => (i === 1 ? { category: 'spam' } : i === 3 ? { wallet: 'nope', receipt: 'yes' } : {}));
    const res = await cli(acme, ['--file', writeBatch('bad.json', bad), '--yes']);
    assert.equal(res.code, 2);
    assert.match(res.stderr, /The batch has 3 problems; nothing was sent/);
    assert.match(res.stderr, /item 1: category must be one of/);
    assert.match(res.stderr, /item 3: wallet must be a Solana wallet address/);
    assert.match(res.stderr, /item 3: receipt must be true or false/);

    const cases: [string[], string | undefined, RegExp][] = [
      [['--file', writeBatch('object.json', { wallet })], undefined, /must be a JSON array/],
      [['--file', writeBatch('empty.json', [])], undefined, /The batch is empty/],
      [['--file', path.join(scratch.home, 'missing.json')], undefined, /Cannot read .*missing\.json: ENOENT/],
      [[], undefined, /--file <path> or --from-stdin/],
      [['--from-stdin', '--file', 'x.json'], '[]', /--file <path> or --from-stdin/],
      [['--from-stdin'], '[{"wallet": 1,}]', /standard input is not valid JSON/],
    ];
    for (const [args, input, pattern] of cases) {
      const refused = await cli(acme, [...args, '--yes'], input);
      assert.equal(refused.code, 2, `${args.join(' ')}: ${refused.stderr}`);
      assert.match(refused.stderr, pattern);
    }
    assert.equal(await sentBy(acme), 0);
  });

  it('stops at a refused request: sent items stay sent, the rest are error and not_sent', async () => {
    const acme = await gw.createProtocol({ tier: 3 });
    const file = writeBatch('partial.json', items(250, (i) => (i === 150 ? { templateId: 'tmpl_missing' } : {})));
    const res = await cli(acme, ['--file', file, '--yes', '--idempotency-key', 'partial', '--json']);
    assert.equal(res.code, 3, res.stderr);
    assert.equal(res.errorJson().error.code, 'TEMPLATE_NOT_FOUND');
    const results = res.json();
    assert.equal(results.length, 250);
    assert.ok(results.slice(0, 100).every((r: any) => r.status === 'queued'));
    for (const r of results.slice(100, 200)) {
      assert.deepEqual(Object.keys(r).sort(), ['error', 'index', 'status']);
      assert.equal(r.status, 'error');
      assert.deepEqual([r.error.code, r.error.statusCode], ['TEMPLATE_NOT_FOUND', 404]);
    }
    assert.ok(results.slice(200).every((r: any, i: number) => r.status === 'not_sent' && r.index === 200 + i));
    assert.equal(await sentBy(acme), 100);

    const human = await cli(acme, ['--file', file, '--yes', '--idempotency-key', 'partial']);
    assert.equal(human.code, 3);
    assert.match(human.stdout, /250 notifications in 2 requests: 100 duplicate, 100 error, 50 not_sent/, 'the requests sent, not those planned');
    assert.match(human.stderr, /Request 2 of 3 was refused: items 100 to 249 were not sent/);
    assert.match(human.stderr, /Re-running with the same --idempotency-key sends only what is missing/);
    assert.equal(await sentBy(acme), 100);
  });

  it("names a reused key's item by its index in the file, and gives no advice to re-run what would be refused again", async () => {
    const acme = await gw.createProtocol({ tier: 3 });
    assert.equal((await cli(acme, ['--file', writeBatch('reused.json', items(150)), '--yes', '--idempotency-key', 'reused'])).code, 0);
    const changed = writeBatch('reused-changed.json', items(150, (i) => (i === 120 ? { subject: 'Changed' } : {})));
    const res = await cli(acme, ['--file', changed, '--yes', '--idempotency-key', 'reused']);
    assert.equal(res.code, 1, res.stderr);
    assert.match(res.stderr, /notifications\[120\]\.idempotencyKey/);
    assert.doesNotMatch(res.stderr, /notifications\[20\]/);
    assert.doesNotMatch(res.stderr, /Re-running/);
  });

  it('keeps each bulk request within the default 1 MiB body limit, and halves one a gateway finds too large (413)', async () => {
    const growth = await gw.createProtocol({ tier: 1 });
    // 100 bodies of 11,000 bytes, each within the Growth tier's 50 KiB: over 1 MiB together.
    const big = items(100, () => ({ body: 'a'.repeat(11_000) }));
    const res = await cli(growth, ['--file', writeBatch('big.json', big), '--yes', '--idempotency-key', 'big', '--json']);
    assert.equal(res.code, 0, res.stderr);
    assert.ok(res.json().every((r: any, i: number) => r.status === 'queued' && r.index === i));
    const calls = await waitFor(async () => {
      const log = await call(gw.url, growth.apiKey, 'GET', '/v1/requests?endpoint=/v1/notify/bulk');
      return log.body.total === 2 ? log.body.items : undefined;
    });
    assert.deepEqual(calls.map((entry: any) => entry.statusCode), [202, 202]);
    const dry = await cli(undefined, ['--file', writeBatch('big.json', big), '--dry-run', '--json']);
    assert.equal(dry.json().requests, 2);

    // A gateway whose body limit is lower than the CLI assumes: the refused request goes again in halves.
    const small = await startGateway({ env: { HERALD_ROLE: 'api', HERALD_BODY_LIMIT: '60000', HERALD_REQUEST_LOG_FLUSH_MS: '20' } });
    try {
      const owner = await small.createProtocol({ tier: 1 });
      const holder = await registeredWallet(small.url, { email: 'small@example.com' });
      const ten = items(10, () => ({ wallet: holder, body: 'b'.repeat(11_000) }));
      const halved = await runCli(['notify', 'batch', '--file', writeBatch('ten.json', ten), '--yes', '--json'], {
        env: { ...baseEnv, HERALD_BASE_URL: small.url, HERALD_API_KEY: owner.apiKey },
      });
      assert.equal(halved.code, 0, halved.stderr);
      assert.ok(halved.json().every((r: any, i: number) => r.status === 'queued' && r.index === i));
      const log = await waitFor(async () => {
        const answer = await call(small.url, owner.apiKey, 'GET', '/v1/requests?endpoint=/v1/notify/bulk');
        return answer.body.total === 3 ? answer.body.items : undefined;
      });
      assert.deepEqual(log.map((entry: any) => entry.statusCode).sort(), [202, 202, 413]);
      assert.equal((await call(small.url, owner.apiKey, 'GET', '/v1/notifications?limit=1')).body.total, 10);
      const human = await runCli(['notify', 'batch', '--file', writeBatch('ten.json', ten), '--yes'], {
        env: { ...baseEnv, HERALD_BASE_URL: small.url, HERALD_API_KEY: owner.apiKey },
      });
      assert.match(human.stdout, /^10 notifications in 3 requests: 10 queued$/m, 'the refused request counts, and so do its halves');
    } finally {
      await small.close();
    }
  });

  it('Ctrl-C in the middle still reports every item: sent, in flight (maybe stored), not sent', async () => {
    const acme = await gw.createProtocol({ tier: 3 });
    // In front of the gateway: the second bulk request is held, never answered.
    let bulkRequests = 0;
    const held: ServerResponse[] = [];
    const proxy = createServer(async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      if (request.url === '/v1/notify/bulk' && ++bulkRequests === 2) return void held.push(response);
      const upstream = await fetch(`${gw.url}${request.url}`, {
        method: request.method,
        headers: { authorization: String(request.headers.authorization), 'content-type': 'application/json' },
        body: chunks.length ? Buffer.concat(chunks) : undefined,
      });
      response.writeHead(upstream.status, { 'content-type': 'application/json' }).end(await upstream.text());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    try {
      const res = await runCli(['notify', 'batch', '--file', writeBatch('stopped.json', items(250)), '--yes', '--json'], {
        env: { ...baseEnv, HERALD_BASE_URL: proxyUrl, HERALD_API_KEY: acme.apiKey },
        whileRunning: (child) => waitFor(async () => (held.length === 1 ? child.kill('SIGINT') : undefined)),
      });
      assert.equal(res.code, 2, res.stderr);
      const results = res.json();
      assert.equal(results.length, 250);
      assert.ok(results.slice(0, 100).every((r: any, i: number) => r.status === 'queued' && r.index === i));
      assert.ok(results.slice(100, 200).every((r: any) => r.status === 'error' && r.error.code === 'CANCELLED' && /may have been stored/.test(r.error.message)));
      assert.ok(results.slice(200).every((r: any, i: number) => r.status === 'not_sent' && r.index === 200 + i));
      const { error } = res.errorJson();
      assert.equal(error.code, 'CANCELLED');
      assert.equal(error.message, 'Cancelled: 100 of 250 items were sent; items 100 to 199, in flight, may have been stored');
      // Running again with the key sends only what is missing.
      assert.match(error.idempotencyKey, /^cli_/);
      const again = await cli(acme, ['--file', writeBatch('stopped.json', items(250)), '--yes', '--idempotency-key', error.idempotencyKey, '--json']);
      assert.equal(again.code, 0, again.stderr);
      assert.deepEqual(again.json().slice(0, 100).map((r: any) => r.notificationId), results.slice(0, 100).map((r: any) => r.notificationId));
      assert.equal(await sentBy(acme), 250);
    } finally {
      for (const response of held) response.destroy();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('on a terminal: asks first, and draws a progress bar while sending', { skip: hasScript ? false : 'util-linux `script` is not installed' }, async () => {
    const acme = await gw.createProtocol({ tier: 3 });
    const env = { ...baseEnv, HERALD_API_KEY: acme.apiKey };
    const small = writeBatch('tty-small.json', items(2));
    const declined = await onTerminal(['notify', 'batch', '--file', small], env, '[y/N]', 'n\r');
    assert.equal(declined.code, 2, declined.screen);
    assert.match(declined.screen, /Send 2 notifications to 1 wallet in 1 request\?/);
    assert.equal(await sentBy(acme), 0);

    const accepted = await onTerminal(['notify', 'batch', '--file', writeBatch('tty.json', items(150))], env, '[y/N]', 'y\r');
    assert.equal(accepted.code, 0, accepted.screen);
    const screen = accepted.screen.replace(/\x1b\[\d+[A-Za-z]/g, '');
    assert.match(screen, /\rSending \[#{20}-{10}\] 100\/150\rSending \[#{30}\] 150\/150\r\n/);
    assert.match(screen, /150 notifications in 2 requests: 150 queued/);
    assert.equal(await sentBy(acme), 150);
  });
});
