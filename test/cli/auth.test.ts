import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { ensureBuilt, runCli, scratchHome } from './run-cli.js';

describe('herald auth login, whoami, logout', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  let scratch: ReturnType<typeof scratchHome>;
  let env: Record<string, string>;
  let configFile: string;
  const herald = (args: string[], extra: Record<string, string | undefined> = {}, input?: string) =>
    runCli(args, { env: { ...env, ...extra }, input });

  before(async () => {
    ensureBuilt();
    gw = await startGateway();
    acme = await gw.createProtocol({ tier: 1, name: 'Acme' });
    scratch = scratchHome();
    env = { HOME: scratch.home, XDG_CONFIG_HOME: scratch.config, HERALD_BASE_URL: gw.url };
    configFile = path.join(scratch.config, 'herald', 'config.json');
  });
  after(async () => {
    await gw.close();
    scratch.cleanup();
  });

  it('login checks the key, saves it with mode 0600, and later commands use it', async () => {
    const login = await herald(['auth', 'login', '--api-key', acme.apiKey, '--json']);
    assert.equal(login.code, 0, login.stderr);
    const result = login.json();
    assert.equal(result.loggedIn, true);
    assert.equal(result.configPath, configFile);
    assert.equal(result.protocol.id, acme.id);
    assert.equal(result.apiKey, `${acme.apiKey.slice(0, 14)}…`);
    assert.ok(!login.stdout.includes(acme.apiKey), 'the whole key is never printed');

    assert.equal(statSync(configFile).mode & 0o777, 0o600);
    assert.equal(statSync(path.dirname(configFile)).mode & 0o777, 0o700);
    assert.deepEqual(JSON.parse(readFileSync(configFile, 'utf8')), { apiKey: acme.apiKey, baseUrl: gw.url });

    // Neither key nor base URL in the environment: both come from the config file.
    const usage = await herald(['usage', '--json'], { HERALD_BASE_URL: undefined });
    assert.equal(usage.code, 0, usage.stderr);
    assert.equal(usage.json().tier, 1);
    // Set but empty is not set, for every variable alike: the config file still answers.
    for (const empty of [{ HERALD_BASE_URL: '' }, { HERALD_API_KEY: '' }, { HERALD_MAX_RETRIES: ' ' }, { HERALD_BASE_URL: '', HERALD_API_KEY: '' }]) {
      const res = await herald(['usage', '--json'], empty);
      assert.equal(res.code, 0, `${JSON.stringify(empty)}: ${res.stderr}`);
      assert.equal(res.json().tier, 1);
    }
  });

  it('whoami shows the protocol and a masked key with its source', async () => {
    const human = await herald(['auth', 'whoami']);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /as Acme/);
    assert.ok(human.stdout.includes(`${acme.apiKey.slice(0, 14)}…`));
    assert.ok(!human.stdout.includes(acme.apiKey));
    assert.match(human.stdout, /from the config file/);

    const json = (await herald(['auth', 'whoami', '--json'])).json();
    assert.equal(json.keySource, 'config');
    assert.equal(json.environment, 'production');
    assert.equal(json.protocol.name, 'Acme');

    const fromEnv = (await herald(['auth', 'whoami', '--json'], { HERALD_API_KEY: acme.sandboxApiKey })).json();
    assert.equal(fromEnv.keySource, 'env');
    assert.equal(fromEnv.environment, 'sandbox');
    const fromFlag = (await herald(['auth', 'whoami', '--json', '--api-key', acme.sandboxApiKey], { HERALD_API_KEY: acme.apiKey })).json();
    assert.equal(fromFlag.keySource, 'flag');
    assert.ok(fromFlag.apiKey.startsWith('hrld_test_'));
  });

  it('logout deletes the file; whoami then exits 4', async () => {
    const logout = await herald(['auth', 'logout', '--json']);
    assert.equal(logout.code, 0, logout.stderr);
    assert.deepEqual(logout.json(), { loggedOut: true, configPath: configFile });
    assert.equal(existsSync(configFile), false);

    const again = await herald(['auth', 'logout', '--json']);
    assert.equal(again.json().loggedOut, false);

    const whoami = await herald(['auth', 'whoami']);
    assert.equal(whoami.code, 4);
    assert.match(whoami.stderr, /No API key/);
  });

  it('login reads the key from stdin with --with-token', async () => {
    const login = await herald(['auth', 'login', '--with-token'], {}, `${acme.sandboxApiKey}\n`);
    assert.equal(login.code, 0, login.stderr);
    assert.match(login.stdout, /Logged in/);
    assert.equal(JSON.parse(readFileSync(configFile, 'utf8')).apiKey, acme.sandboxApiKey);
    await herald(['auth', 'logout']);
  });

  it('refuses a bad key (exit 4) and writes nothing', async () => {
    const bad = 'hrld_live_0123456789012345678901234567890123456789';
    const login = await herald(['auth', 'login', '--api-key', bad]);
    assert.equal(login.code, 4);
    assert.equal(existsSync(configFile), false);
    // The hint is about the key given, not about running login.
    const piped = await herald(['auth', 'login', '--with-token'], {}, `${bad}\n`);
    assert.equal(piped.code, 4);
    assert.match(piped.stderr, /The gateway refused this key: check that it is whole/);
    assert.doesNotMatch(piped.stderr, /herald auth login|HERALD_API_KEY/);
    const whoami = await herald(['auth', 'whoami', '--api-key', bad]);
    assert.match(whoami.stderr, /Check --api-key or HERALD_API_KEY, or run `herald auth login`/);
  });

  it('exits 2 with no key to save and no terminal to ask on', async () => {
    const login = await herald(['auth', 'login', '--json']);
    assert.equal(login.code, 2);
    assert.equal(login.errorJson().error.code, 'USAGE');
    assert.equal(login.errorJson().error.message, 'No API key given: pass --api-key, set HERALD_API_KEY, or pipe it in with --with-token');
    const empty = await herald(['auth', 'login', '--with-token'], {}, '\n');
    assert.equal(empty.code, 2);
  });

  it('falls back to ~/.config/herald when XDG_CONFIG_HOME is not set', async () => {
    const login = await herald(['auth', 'login', '--api-key', acme.apiKey, '--json'], { XDG_CONFIG_HOME: undefined });
    assert.equal(login.code, 0, login.stderr);
    const fallback = path.join(scratch.home, '.config', 'herald', 'config.json');
    assert.equal(login.json().configPath, fallback);
    assert.equal(statSync(fallback).mode & 0o777, 0o600);
    await herald(['auth', 'logout'], { XDG_CONFIG_HOME: undefined });
    assert.equal(existsSync(fallback), false);
  });

  it('names a corrupt config file instead of crashing', async () => {
    mkdirSync(path.dirname(configFile), { recursive: true });
    writeFileSync(configFile, '{not json');
    const res = await herald(['usage']);
    assert.equal(res.code, 1);
    assert.ok(res.stderr.includes(configFile), res.stderr);
    assert.equal((await herald(['auth', 'logout'])).code, 0, 'logout still clears it');
    assert.equal(existsSync(configFile), false);
  });

  it('names a config path the system refuses: CONFIG_INVALID, naming the path and why', async () => {
    // config.json is a directory.
    mkdirSync(configFile, { recursive: true });
    for (const command of [['usage'], ['auth', 'logout']]) {
      const res = await herald(['--json', ...command]);
      assert.equal(res.code, 1, `${command.join(' ')}: ${res.stderr}`);
      const { error } = res.errorJson();
      assert.equal(error.code, 'CONFIG_INVALID');
      assert.ok(error.message.startsWith(`${configFile} cannot be ${command[0] === 'usage' ? 'read' : 'deleted'}: it is a directory`), error.message);
    }
    rmSync(configFile, { recursive: true });
    // The config directory is under a file.
    const file = path.join(scratch.home, 'not-a-directory');
    writeFileSync(file, '');
    const under = await herald(['--json', 'usage'], { XDG_CONFIG_HOME: file });
    assert.equal(under.code, 1, under.stderr);
    assert.equal(under.errorJson().error.code, 'CONFIG_INVALID');
    assert.match(under.errorJson().error.message, new RegExp(`^${file}/herald/config\\.json cannot be read: a part of its path is a file, not a directory \\(ENOTDIR\\)`));
    const human = await herald(['usage'], { XDG_CONFIG_HOME: file });
    assert.match(human.stderr, /Error: .*cannot be read: .*\(CONFIG_INVALID\)/);
  });

  it('refuses a config file whose values are not what login writes: CONFIG_INVALID, naming the value', async () => {
    mkdirSync(path.dirname(configFile), { recursive: true });
    const cases: [unknown, RegExp][] = [
      [{ apiKey: 'hrld_test_x', baseUrl: 'ftp://x' }, /baseUrl must be an http:\/\/ or https:\/\/ URL without a query or fragment, got "ftp:\/\/x"/],
      [{ baseUrl: 'http://localhost:3000/?x=1' }, /baseUrl must be .*got "http:\/\/localhost:3000\/\?x=1"/],
      [{ baseUrl: 3000 }, /baseUrl must be .*got 3000/],
      [{ apiKey: 5 }, /apiKey must be a string/],
      [[1, 2], /it must hold an object/],
    ];
    for (const [content, message] of cases) {
      writeFileSync(configFile, JSON.stringify(content));
      const res = await herald(['--json', 'usage'], { HERALD_BASE_URL: undefined, HERALD_API_KEY: undefined });
      assert.equal(res.code, 1, JSON.stringify(content));
      const error = res.errorJson().error;
      assert.equal(error.code, 'CONFIG_INVALID', JSON.stringify(content));
      assert.ok(error.message.startsWith(configFile), error.message);
      assert.match(error.message, message);
      assert.match(error.message, /herald auth logout\)$/);
    }
    await herald(['auth', 'logout']);
  });
});
