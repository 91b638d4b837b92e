import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { reserveSends } from '../../packages/server/src/limits/quota.js';
import { call, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { closedPort, ensureBuilt, runCli, scratchHome } from './run-cli.js';

const CHANNEL_CHECKS = ['channel.email', 'channel.telegram', 'channel.sms'];

function assertReportShape(report: any) {
  assert.deepEqual(Object.keys(report).sort(), ['baseUrl', 'checks', 'errors', 'ok']);
  assert.equal(typeof report.ok, 'boolean');
  assert.ok(Array.isArray(report.errors));
  for (const check of report.checks) {
    assert.deepEqual(Object.keys(check).sort(), ['detail', 'name', 'ok']);
    assert.equal(typeof check.ok, 'boolean');
    assert.equal(typeof check.detail, 'string');
  }
  assert.equal(report.ok, report.errors.length === 0);
  assert.equal(report.errors.length, report.checks.filter((c: any) => !c.ok).length);
}

describe('herald doctor', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  let scratch: ReturnType<typeof scratchHome>;
  let env: Record<string, string>;
  const doctor = (args: string[], extra: Record<string, string | undefined> = {}) => runCli(['doctor', ...args], { env: { ...env, ...extra } });

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

  it('--json reports every check passing, with each channel provider from /health', async () => {
    const res = await doctor(['--json']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stderr, '');
    const report = res.json();
    assertReportShape(report);
    assert.equal(report.ok, true);
    assert.equal(report.baseUrl, gw.url);
    assert.deepEqual(
      report.checks.map((c: any) => c.name),
      ['gateway', 'health', 'apiKey', 'quota', ...CHANNEL_CHECKS],
    );
    const health = (await call(gw.url, undefined, 'GET', '/health')).body;
    for (const [channel, provider] of Object.entries(health.channels) as [string, string][]) {
      const check = report.checks.find((c: any) => c.name === `channel.${channel}`);
      assert.ok(check.detail.startsWith(provider), check.detail);
    }
    const quota = report.checks.find((c: any) => c.name === 'quota');
    assert.match(quota.detail, /^1,000,000 sends left this month/);
    const apiKey = report.checks.find((c: any) => c.name === 'apiKey');
    assert.ok(!apiKey.detail.includes(acme.apiKey), 'the key is masked');
  });

  it("sits out a Developer key's per-second limit instead of reporting the key as failing", async () => {
    const developer = await gw.createProtocol({ tier: 0, name: 'Small' });
    // Spend the second's budget (2 requests) just before doctor runs, as a command would.
    await call(gw.url, developer.apiKey, 'GET', '/v1/usage');
    await call(gw.url, developer.apiKey, 'GET', '/v1/usage');
    const res = await doctor(['--json'], { HERALD_API_KEY: developer.apiKey });
    assert.equal(res.code, 0, res.stdout + res.stderr);
    const report = res.json();
    assert.equal(report.ok, true, JSON.stringify(report.errors));
    assert.ok(report.checks.find((c: any) => c.name === 'quota').ok);
  });

  it('prints a checklist for people', async () => {
    const res = await doctor([]);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /✓ gateway/);
    assert.match(res.stdout, /✓ channel\.sms\s+capture/);
  });

  it('fails the key check with a bad key: ok false, exit 4', async () => {
    const res = await doctor(['--json'], { HERALD_API_KEY: 'hrld_live_0123456789012345678901234567890123456789' });
    assert.equal(res.code, 4);
    const report = res.json();
    assertReportShape(report);
    assert.equal(report.ok, false);
    const apiKey = report.checks.find((c: any) => c.name === 'apiKey');
    assert.equal(apiKey.ok, false);
    assert.match(apiKey.detail, /INVALID_API_KEY/);
    assert.ok(report.checks.find((c: any) => c.name === 'health').ok, 'the gateway itself is fine');
    assert.equal(res.errorJson().error.code, 'DOCTOR_FAILED');
    // quota needs the key, so it is skipped and the count names only the checks that ran
    assert.ok(!report.checks.some((c: any) => c.name === 'quota'));
    assert.match(res.errorJson().error.message, new RegExp(`^1 of the ${report.checks.length} checks run failed`));
  });

  it('fails without a key: exit 4, channels still reported', async () => {
    const res = await doctor(['--json'], { HERALD_API_KEY: undefined });
    assert.equal(res.code, 4);
    const report = res.json();
    assertReportShape(report);
    assert.deepEqual(
      report.checks.filter((c: any) => !c.ok).map((c: any) => c.name),
      ['apiKey'],
    );
    assert.ok(CHANNEL_CHECKS.every((name) => report.checks.some((c: any) => c.name === name)));
  });

  it('fails the quota check when the month is used up', async () => {
    const spent = await gw.createProtocol({ tier: 0 });
    // Spends the month the way sends do, without sending a thousand notifications.
    assert.ok(await reserveSends(gw.herald.deps.db, { id: spent.id, tier: 0, overage_enabled: false }, 1000, new Date()));
    const res = await doctor(['--json'], { HERALD_API_KEY: spent.apiKey });
    assert.equal(res.code, 1, res.stdout);
    const report = res.json();
    assertReportShape(report);
    assert.deepEqual(report.errors.length, 1);
    assert.match(report.errors[0], /^quota: monthly quota used up/);
  });

  it('fails the health check with exit 5 when /health is still rate-limited after its waits', async () => {
    let requests = 0;
    const limited = createServer((_req, res) => {
      requests++;
      const body = { statusCode: 429, error: 'Too Many Requests', code: 'RATE_LIMIT_EXCEEDED', message: 'Rate limit exceeded' };
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' }).end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => limited.listen(0, '127.0.0.1', resolve));
    try {
      const res = await doctor(['--json'], { HERALD_BASE_URL: `http://127.0.0.1:${(limited.address() as AddressInfo).port}` });
      assert.equal(res.code, 5, res.stderr);
      const report = res.json();
      assertReportShape(report);
      // The key is checked too (refused alike); the first failed check, health, decides the exit code.
      assert.deepEqual(report.checks.map((c: any) => [c.name, c.ok]), [['gateway', true], ['health', false], ['apiKey', false]]);
      assert.match(report.errors[0], /^health: RATE_LIMIT_EXCEEDED/);
      assert.equal(requests, 6, 'each call, and once more after each of its two waits');
      assert.equal(res.errorJson().error.exitCode, 5);
    } finally {
      await new Promise((resolve) => limited.close(resolve));
    }
  });

  it('fails the gateway check against a closed port: exit 6', async () => {
    const port = await closedPort();
    const res = await doctor(['--json'], { HERALD_BASE_URL: `http://127.0.0.1:${port}` });
    assert.equal(res.code, 6);
    const report = res.json();
    assertReportShape(report);
    assert.equal(report.ok, false);
    assert.deepEqual(
      report.checks.map((c: any) => [c.name, c.ok]),
      [['gateway', false]],
    );
    assert.match(report.errors[0], /Connection refused/);
  });

  it('fails the gateway check, and a send, against a server that is not a gateway: exit 6, nothing taken for an answer', async () => {
    const html = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>'));
    await new Promise<void>((resolve) => html.listen(0, '127.0.0.1', resolve));
    const baseUrl = `http://127.0.0.1:${(html.address() as AddressInfo).port}`;
    try {
      const res = await doctor(['--json'], { HERALD_BASE_URL: baseUrl });
      assert.equal(res.code, 6);
      const report = res.json();
      assertReportShape(report);
      assert.deepEqual(report.checks.map((c: any) => [c.name, c.ok]), [['gateway', false]]);
      assert.match(report.errors[0], /answered 200 with a body that is not JSON \(text\/html\): is .* a Herald gateway\?/);
      const send = await runCli(['--json', 'notify', 'send', '--wallet', '11111111111111111111111111111111', '--subject', 's', '--body', 'b', '--category', 'defi'], {
        env: { ...env, HERALD_BASE_URL: baseUrl },
      });
      assert.equal(send.code, 6);
      assert.equal(send.stdout, '');
      const error = send.errorJson().error;
      assert.equal(error.code, 'NETWORK_INVALID_RESPONSE');
      // Whether a send was stored is unknown: the key to run it again with is given.
      assert.match(error.idempotencyKey, /^cli_/);
    } finally {
      await new Promise((resolve) => html.close(resolve));
    }
  });
  it('takes 2xx JSON that is not the gateway\'s answer for what it is: every command exits 6, doctor prints its report, login saves nothing', async () => {
    for (const body of ['{}', '[1,2]']) {
      const other = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
      await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
      const baseUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
      const own = scratchHome();
      const ownEnv = { HOME: own.home, XDG_CONFIG_HOME: own.config, HERALD_BASE_URL: baseUrl, HERALD_API_KEY: 'hrld_live_notchecked' };
      try {
        const res = await doctor(['--json'], { HERALD_BASE_URL: baseUrl });
        assert.equal(res.code, 6, `${body}: ${res.stderr}`);
        const report = res.json();
        assertReportShape(report);
        assert.deepEqual(report.checks.map((c: any) => [c.name, c.ok]), [['gateway', false]]);
        assert.match(report.errors[0], /answered 200 with JSON that is not the gateway's answer \(.+\): is .* a Herald gateway\?/);
        const commands = [['usage'], ['analytics'], ['notify', 'list'], ['notify', 'status', 'n1'], ['webhook', 'list'], ['schedule', 'list'], ['auth', 'whoami'], ['auth', 'login']];
        for (const command of commands) {
          const run = await runCli(['--json', ...command], { env: ownEnv });
          assert.equal(run.code, 6, `${body} ${command.join(' ')}: ${run.stderr}`);
          assert.equal(run.stdout, '');
          const { error } = run.errorJson();
          assert.equal(error.code, 'NETWORK_INVALID_RESPONSE');
          assert.match(error.message, /JSON that is not the gateway's answer .*: is .* a Herald gateway\?$/);
        }
        assert.equal(existsSync(path.join(own.config, 'herald', 'config.json')), false, 'login saved nothing');
        const human = await runCli(['auth', 'whoami'], { env: ownEnv });
        assert.equal(human.code, 6);
        assert.doesNotMatch(human.stdout, /undefined/);
      } finally {
        own.cleanup();
        await new Promise((resolve) => other.close(resolve));
      }
    }
  });

  it('takes an empty 204 from a server that is not a gateway for what it is: login saves nothing, info and doctor exit 6', async () => {
    const empty = createServer((_req, res) => res.writeHead(204).end());
    await new Promise<void>((resolve) => empty.listen(0, '127.0.0.1', resolve));
    const baseUrl = `http://127.0.0.1:${(empty.address() as AddressInfo).port}`;
    const own = scratchHome();
    const ownEnv = { HOME: own.home, XDG_CONFIG_HOME: own.config, HERALD_BASE_URL: baseUrl };
    try {
      const login = await runCli(['--json', 'auth', 'login', '--api-key', 'hrld_live_notchecked'], { env: ownEnv });
      assert.equal(login.code, 6, login.stderr);
      assert.equal(login.stdout, '');
      assert.equal(login.errorJson().error.code, 'NETWORK_INVALID_RESPONSE');
      assert.match(login.errorJson().error.message, /answered 204 with an empty body: is .* a Herald gateway\?/);
      const info = await runCli(['--json', 'protocol', 'info'], { env: { ...ownEnv, HERALD_API_KEY: 'hrld_live_notchecked' } });
      assert.equal(info.code, 6, 'the key was not saved, and the answer is not taken for one');
      assert.equal(info.stdout, '');
      assert.equal(info.errorJson().error.code, 'NETWORK_INVALID_RESPONSE');
      const res = await doctor(['--json'], { HERALD_BASE_URL: baseUrl });
      assert.equal(res.code, 6);
      const report = res.json();
      assertReportShape(report);
      assert.equal(report.ok, false);
      assert.ok(report.errors.every((error: string) => !/Cannot read properties/.test(error)), JSON.stringify(report.errors));
    } finally {
      own.cleanup();
      await new Promise((resolve) => empty.close(resolve));
    }
  });
});
