import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { call, sleep, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { closedPort, ensureBuilt, ROOT, runCli, scratchHome } from './run-cli.js';

const ESC = '\x1b[';

describe('herald protocol info, usage, requests and exit codes', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  let scratch: ReturnType<typeof scratchHome>;
  let env: Record<string, string>;
  const herald = (args: string[], extra: Record<string, string | undefined> = {}) => runCli(args, { env: { ...env, ...extra } });

  before(async () => {
    ensureBuilt();
    gw = await startGateway();
    acme = await gw.createProtocol({ tier: 3, name: 'Acme' });
    scratch = scratchHome();
    env = { HOME: scratch.home, XDG_CONFIG_HOME: scratch.config, HERALD_BASE_URL: gw.url, HERALD_API_KEY: acme.apiKey };
  });
  after(async () => {
    await gw.close();
    scratch.cleanup();
  });

  it('protocol info, usage and requests --json print exactly what the API answers', async () => {
    const info = await herald(['protocol', 'info', '--json']);
    assert.equal(info.code, 0, info.stderr);
    assert.deepEqual(info.json(), (await call(gw.url, acme.apiKey, 'GET', '/v1/protocols/me')).body);

    const usage = await herald(['usage', '--json']);
    assert.equal(usage.code, 0, usage.stderr);
    assert.deepEqual(Object.keys(usage.json()).sort(), ['overageEnabled', 'remaining', 'resetsAt', 'tier', 'usage']);
    assert.equal(usage.json().remaining, 1_000_000);

    const requests = await herald(['requests', '--json', '--endpoint', '/v1/usage', '--status', '200', '--limit', '5']);
    assert.equal(requests.code, 0, requests.stderr);
    const page = requests.json();
    assert.equal(page.page, 1);
    assert.ok(page.total >= 1);
    for (const item of page.items) {
      assert.deepEqual(Object.keys(item).sort(), ['endpoint', 'latencyMs', 'method', 'statusCode', 'timestamp']);
      assert.equal(item.statusCode, 200);
      assert.match(item.endpoint, /\/v1\/usage/);
    }
  });

  it('prints tables and fields for people', async () => {
    const info = await herald(['protocol', 'info']);
    assert.match(info.stdout, /name\s+Acme/);
    assert.match(info.stdout, /tier\s+3 \(Enterprise\)/);
    const requests = await herald(['requests', '--limit', '3']);
    assert.match(requests.stdout, /^TIME\s+METHOD\s+STATUS\s+LATENCY\s+ENDPOINT/);
    assert.match(requests.stdout, /page 1, \d+ shown of \d+/);
  });

  it('exits 4 with an unknown key, a malformed key or no key at all', async () => {
    const bad = await herald(['usage', '--api-key', 'hrld_live_0123456789012345678901234567890123456789']);
    assert.equal(bad.code, 4);
    assert.match(bad.stderr, /INVALID_API_KEY/);
    assert.equal(bad.stdout, '');

    const badJson = await herald(['protocol', 'info', '--json'], { HERALD_API_KEY: 'nonsense' });
    assert.equal(badJson.code, 4);
    assert.deepEqual(
      { ...badJson.errorJson().error, requestId: undefined },
      { code: 'INVALID_API_KEY', statusCode: 401, message: 'Invalid API key: it is malformed, unknown or revoked', exitCode: 4, requestId: undefined },
    );

    const none = await herald(['usage'], { HERALD_API_KEY: undefined });
    assert.equal(none.code, 4);
    assert.match(none.stderr, /No API key/);
  });

  it('exits 6 against a closed port, after its retries, naming the address', async () => {
    const port = await closedPort();
    const res = await herald(['usage', '--json'], { HERALD_BASE_URL: `http://127.0.0.1:${port}` });
    assert.equal(res.code, 6);
    assert.equal(res.stdout, '');
    const { error } = res.errorJson();
    assert.equal(error.code, 'NETWORK_CONNECTION_REFUSED');
    assert.ok(error.message.includes(`127.0.0.1:${port}`), error.message);
  });

  it('exits 6 when the gateway does not answer in time', async () => {
    const { createServer } = await import('node:http');
    const silent = createServer(() => {
      // accepts the request and never answers
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as { port: number }).port;
      const res = await herald(['usage', '--timeout', '300', '--max-retries', '0'], { HERALD_BASE_URL: `http://127.0.0.1:${port}` });
      assert.equal(res.code, 6);
      assert.match(res.stderr, /timed out after 300 ms/);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });

  it('exits 2 on bad usage: unknown command or option, bad values, no command', async () => {
    for (const args of [['bogus'], ['usage', '--bogus'], ['requests', '--limit', '101'], ['requests', '--status', 'abc'], ['--base-url', 'ftp://x', 'usage'], ['--base-url', 'http://localhost:3000/#', 'usage'], ['--base-url', 'http://localhost:3000?', 'usage'], []]) {
      const res = await herald(args);
      assert.equal(res.code, 2, `${args.join(' ')}: ${res.stderr}`);
      assert.ok(res.stderr.length > 0);
    }
    const json = await herald(['requests', '--json', '--page', '0']);
    assert.equal(json.code, 2);
    assert.equal(json.stdout, '');
    assert.equal(json.errorJson().error.code, 'USAGE');
    assert.match(json.errorJson().error.message, /--page/);

    const noCommand = await herald(['--json']);
    assert.equal(noCommand.code, 2);
    assert.equal(noCommand.stdout, '');
    assert.match(noCommand.errorJson().error.message, /No command given/);
  });

  it('exits 0 for --help and --version', async () => {
    const help = await herald(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Usage: herald/);
    assert.match(help.stdout, /Exit codes/);
    const nested = await herald(['admin', 'protocols', 'create', '--help']);
    assert.equal(nested.code, 0);
    assert.match(nested.stdout, /--tier <tier>/);
    const status = await herald(['broadcast', 'status', '--help']);
    assert.equal(status.code, 0);
    assert.doesNotMatch(status.stdout, /--subject/, "broadcast's own message options are not this command's");
    assert.match(status.stdout, /--api-key/);
    for (const asked of [['help'], ['help', 'notify'], ['--json', 'help']]) {
      const res = await herald(asked);
      assert.equal(res.code, 0, `herald ${asked.join(' ')}: ${res.stderr}`);
      assert.match(res.stdout, /Usage: herald/);
      assert.equal(res.stderr, '');
    }
    // Commander's help command looks one level down; a deeper path shows that command's help.
    for (const asked of [
      ['help', 'notify', 'send'],
      ['--json', 'help', 'admin', 'protocols', 'create'],
      ['help', 'notify', 'send', '--json'],
    ]) {
      const res = await herald(asked);
      assert.equal(res.code, 0, `herald ${asked.join(' ')}: ${res.stderr}`);
      const text = asked.includes('--json') ? res.json().help : res.stdout;
      assert.match(text, new RegExp(`Usage: herald ${asked.filter((word) => !word.startsWith('-')).slice(1).join(' ')} `));
    }
    // With --json, the help is one JSON document too: {help}.
    for (const asked of [['--json', '--help'], ['notify', 'send', '--help', '--json'], ['--json', 'schedule', '-h']]) {
      const res = await herald(asked);
      assert.equal(res.code, 0, `herald ${asked.join(' ')}: ${res.stderr}`);
      const { help } = res.json();
      assert.match(help, new RegExp(`^Usage: herald ${asked.filter((word) => !word.startsWith('-')).join(' ')}`.replace(/ $/, '')));
      assert.equal(res.stderr, '');
    }
    const version = await herald(['--version']);
    assert.equal(version.code, 0);
    const { version: expected } = JSON.parse(readFileSync(path.join(ROOT, 'packages/cli/package.json'), 'utf8'));
    assert.equal(version.stdout.trim(), expected);
    for (const asked of [['--json', '--version'], ['--version', '--json']]) {
      const res = await herald(asked);
      assert.equal(res.code, 0);
      assert.deepEqual(res.json(), { version: expected }, asked.join(' '));
      assert.equal(res.stdout, `${JSON.stringify({ version: expected }, null, 2)}\n`, 'pretty-printed, as every --json document');
    }
  });

  it('exits 5 when still rate-limited after its retries', async () => {
    const small = await gw.createProtocol({ tier: 0 });
    let hammering = true;
    // Keeps the tier-0 budget (2 per second) spent at the start of every second.
    const hammer = (async () => {
      while (hammering) {
        await Promise.all([1, 2, 3].map(() => fetch(`${gw.url}/v1/usage`, { headers: { authorization: `Bearer ${small.apiKey}` } }).then((r) => r.arrayBuffer())));
        await sleep(10);
      }
    })();
    try {
      let res;
      // Rarely a request lands between a window opening and the hammer's next round; try again then.
      for (let attempt = 0; attempt < 4; attempt++) {
        res = await herald(['usage', '--max-retries', '1', '--json'], { HERALD_API_KEY: small.apiKey });
        if (res.code !== 0) break;
      }
      assert.equal(res!.code, 5, res!.stderr);
      assert.equal(res!.errorJson().error.code, 'RATE_LIMIT_EXCEEDED');
    } finally {
      hammering = false;
      await hammer;
    }
  });

  it('uses colour only when allowed: never with NO_COLOR or --json, not on a pipe unless forced', async () => {
    const piped = await herald(['protocol', 'info']);
    assert.ok(!piped.stdout.includes(ESC), 'no colour on a pipe');

    const forced = await herald(['requests', '--limit', '2'], { FORCE_COLOR: '1' });
    assert.ok(forced.stdout.includes(ESC), 'FORCE_COLOR colours a pipe');

    const noColor = await herald(['requests', '--limit', '2'], { FORCE_COLOR: '1', NO_COLOR: '1' });
    assert.equal(noColor.code, 0);
    assert.ok(!noColor.stdout.includes(ESC), 'NO_COLOR wins');

    const badKey = { HERALD_API_KEY: 'hrld_live_0123456789012345678901234567890123456789', FORCE_COLOR: '1' };
    assert.ok((await herald(['usage'], badKey)).stderr.includes(ESC));
    assert.ok(!(await herald(['usage'], { ...badKey, NO_COLOR: '1' })).stderr.includes(ESC));

    const json = await herald(['requests', '--limit', '2', '--json'], { FORCE_COLOR: '1' });
    assert.ok(!json.stdout.includes(ESC), '--json never colours');
    json.json();
  });

  it('runs through the package bin and `npx herald` from the repository root', async () => {
    const launcher = path.join(ROOT, 'packages/cli/bin/herald.js');
    const viaBin = await runCli(['--version'], { entry: launcher, env });
    assert.equal(viaBin.code, 0, viaBin.stderr);
    assert.match(viaBin.stdout, /^\d+\.\d+\.\d+\n$/);
    assert.equal(readFileSync(path.join(ROOT, 'packages/cli/dist/main.js'), 'utf8').split('\n')[0], '#!/usr/bin/env node');

    // --no: never fetch a package of that name from the registry; the workspace's bin must answer.
    const npm = path.join(path.dirname(process.execPath), 'npm');
    const viaNpx = await runCli(['exec', '--no', '--', 'herald', '--help'], {
      entry: npm,
      env: { ...env, HOME: process.env.HOME ?? scratch.home, XDG_CONFIG_HOME: undefined },
    });
    assert.equal(viaNpx.code, 0, viaNpx.stderr);
    assert.match(viaNpx.stdout, /Usage: herald/);
  });
});
