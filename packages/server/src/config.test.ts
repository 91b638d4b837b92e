import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from './config.js';

const KEY_HEX = 'ab'.repeat(32);

function failure(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return error;
  }
  assert.fail(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  const bad: [string, Record<string, string>, string][] = [
    ['PORT=abc', { PORT: 'abc' }, 'PORT'],
    ['PORT=-1', { PORT: '-1' }, 'PORT'],
    ['PORT=70000', { PORT: '70000' }, 'PORT'],
    ['PORT=3000.5', { PORT: '3000.5' }, 'PORT'],
    ['HERALD_ROLE=x', { HERALD_ROLE: 'x' }, 'HERALD_ROLE'],
    ['DATABASE_URL=mysql://', { DATABASE_URL: 'mysql://db/x', HERALD_ENCRYPTION_KEY: KEY_HEX }, 'DATABASE_URL'],
    ['DATABASE_URL not a URL', { DATABASE_URL: 'localhost:5432', HERALD_ENCRYPTION_KEY: KEY_HEX }, 'DATABASE_URL'],
    ['DATABASE_URL without HERALD_ENCRYPTION_KEY', { DATABASE_URL: 'postgres://u@h/db' }, 'HERALD_ENCRYPTION_KEY'],
    ['HERALD_ENCRYPTION_KEY too short', { HERALD_ENCRYPTION_KEY: 'ab'.repeat(16) }, 'HERALD_ENCRYPTION_KEY'],
    ['HERALD_ENCRYPTION_KEY too long', { HERALD_ENCRYPTION_KEY: 'ab'.repeat(33) }, 'HERALD_ENCRYPTION_KEY'],
    ['HERALD_ENCRYPTION_KEY 64 non-hex chars', { HERALD_ENCRYPTION_KEY: 'z'.repeat(64) }, 'HERALD_ENCRYPTION_KEY'],
    ['REDIS_URL=http://x', { REDIS_URL: 'http://x' }, 'REDIS_URL'],
    ['LOG_LEVEL=loud', { LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    ['short HERALD_ADMIN_TOKEN', { HERALD_ADMIN_TOKEN: 'short' }, 'HERALD_ADMIN_TOKEN'],
    ['blank HERALD_ADMIN_TOKEN', { HERALD_ADMIN_TOKEN: ' '.repeat(20) }, 'HERALD_ADMIN_TOKEN'],
    ['short TELEGRAM_WEBHOOK_SECRET', { TELEGRAM_WEBHOOK_SECRET: 'abc123' }, 'TELEGRAM_WEBHOOK_SECRET'],
    ['TELEGRAM_WEBHOOK_SECRET with a dot', { TELEGRAM_WEBHOOK_SECRET: 'secret.of.the.bot.1234' }, 'TELEGRAM_WEBHOOK_SECRET'],
    ['HERALD_ADMIN_TOKEN with a space', { HERALD_ADMIN_TOKEN: 'secret token of mine' }, 'HERALD_ADMIN_TOKEN'],
    ['HERALD_ADMIN_TOKEN beyond ASCII', { HERALD_ADMIN_TOKEN: 'pässwörd-1234567890' }, 'HERALD_ADMIN_TOKEN'],
    ['HERALD_DOCS_DIR missing', { HERALD_DOCS_DIR: '/nonexistent/herald-docs' }, 'HERALD_DOCS_DIR'],
    ['HERALD_EXAMPLES_DIR a file', { HERALD_EXAMPLES_DIR: fileURLToPath(import.meta.url) }, 'HERALD_EXAMPLES_DIR'],
    ['HERALD_PUBLIC_URL=ftp://x', { HERALD_PUBLIC_URL: 'ftp://x' }, 'HERALD_PUBLIC_URL'],
    ['HERALD_BODY_LIMIT below 1 KiB', { HERALD_BODY_LIMIT: '10' }, 'HERALD_BODY_LIMIT'],
    ['HERALD_AUTH_CACHE_MS=soon', { HERALD_AUTH_CACHE_MS: 'soon' }, 'HERALD_AUTH_CACHE_MS'],
    ['HERALD_IP_RATE_LIMIT=0', { HERALD_IP_RATE_LIMIT: '0' }, 'HERALD_IP_RATE_LIMIT'],
    ['HERALD_TRUST_PROXY=true', { HERALD_TRUST_PROXY: 'true' }, 'HERALD_TRUST_PROXY'],
    ['HERALD_TRUST_PROXY=1 (a count)', { HERALD_TRUST_PROXY: '1' }, 'HERALD_TRUST_PROXY'],
    ['HERALD_TRUST_PROXY=10.0.0.0/33', { HERALD_TRUST_PROXY: '10.0.0.0/33' }, 'HERALD_TRUST_PROXY'],
    ['HERALD_TRUST_PROXY=lb.internal', { HERALD_TRUST_PROXY: '10.0.0.1, lb.internal' }, 'HERALD_TRUST_PROXY'],
  ];
  for (const [name, env, variable] of bad) {
    it(`fails fast on ${name}, naming ${variable}`, () => {
      const error = failure(env);
      assert.equal(error.variable, variable);
      assert.match(error.message, new RegExp(`\\b${variable}\\b`));
    });
  }

  it("reads HERALD_TRUST_PROXY as the proxies' addresses and ranges", () => {
    assert.equal(loadConfig({}).trustProxy, false);
    assert.equal(loadConfig({ HERALD_TRUST_PROXY: 'false' }).trustProxy, false);
    assert.deepEqual(loadConfig({ HERALD_TRUST_PROXY: '10.0.0.0/8, 192.0.2.7,fd00::/8' }).trustProxy, ['10.0.0.0/8', '192.0.2.7', 'fd00::/8']);
  });

  it('quotes the bad value so the operator sees what was read', () => {
    assert.match(failure({ PORT: 'abc' }).message, /"abc"/);
    assert.match(failure({ LOG_LEVEL: 'loud' }).message, /"loud"/);
    assert.match(failure({ HERALD_HEALTH_PORT: '70000' }).message, /HERALD_HEALTH_PORT/);
  });

  it('has working defaults for an empty environment', () => {
    const config = loadConfig({});
    assert.equal(config.port, 3000);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.role, 'all');
    assert.equal(config.healthPort, undefined);
    assert.equal(config.logLevel, 'info');
    assert.equal(config.dataDir, path.resolve('.herald'));
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.redisUrl, undefined);
    assert.equal(config.redisPrefix, 'herald:');
    assert.equal(config.adminToken, undefined);
    assert.equal(config.encryptionKey, undefined);
    assert.equal(config.publicUrl, 'http://localhost:3000');
    assert.equal(config.bodyLimitBytes, 1024 * 1024);
    assert.equal(config.authCacheMs, 5000);
    assert.equal(config.ipRateLimit, 20);
    assert.equal(config.requestLogFlushMs, 250);
    assert.equal(config.shutdownTimeoutMs, 10_000);
  });

  it('treats empty variables as unset', () => {
    const config = loadConfig({ PORT: '', HERALD_ROLE: '', LOG_LEVEL: '', DATABASE_URL: '', REDIS_URL: '', HERALD_ADMIN_TOKEN: '', HERALD_HEALTH_PORT: '' });
    assert.equal(config.port, 3000);
    assert.equal(config.healthPort, undefined);
    assert.equal(config.role, 'all');
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.adminToken, undefined);
  });

  it('reads every setting it is given', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '127.0.0.1',
      HERALD_ROLE: 'worker',
      HERALD_HEALTH_PORT: '9090',
      LOG_LEVEL: 'warn',
      HERALD_DATA_DIR: 'memory://',
      DATABASE_URL: 'postgresql://u:p@db:5432/herald',
      HERALD_ENCRYPTION_KEY: KEY_HEX,
      REDIS_URL: 'rediss://cache:6380',
      HERALD_REDIS_PREFIX: 'h1:',
      HERALD_ADMIN_TOKEN: 'x'.repeat(16),
      HERALD_PUBLIC_URL: 'https://herald.example.com/',
      HERALD_AUTH_CACHE_MS: '0',
    });
    assert.equal(config.port, 8080);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.role, 'worker');
    assert.equal(config.healthPort, 9090);
    assert.equal(config.logLevel, 'warn');
    assert.equal(config.dataDir, 'memory://');
    assert.equal(config.databaseUrl, 'postgresql://u:p@db:5432/herald');
    assert.deepEqual(config.encryptionKey, Buffer.from(KEY_HEX, 'hex'));
    assert.equal(config.redisUrl, 'rediss://cache:6380');
    assert.equal(config.redisPrefix, 'h1:');
    assert.equal(config.adminToken, 'x'.repeat(16));
    assert.equal(config.publicUrl, 'https://herald.example.com');
    assert.equal(config.authCacheMs, 0);
  });

  it('accepts the encryption key as base64 too', () => {
    const key = Buffer.alloc(32, 7);
    assert.deepEqual(loadConfig({ HERALD_ENCRYPTION_KEY: key.toString('base64') }).encryptionKey, key);
  });
});

describe('main.js with a bad variable', () => {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
  const main = path.join(root, 'packages/server/dist/main.js');

  before(() => {
    if (!existsSync(main)) execFileSync('npx', ['tsc', '-b', 'packages/server'], { cwd: root, stdio: 'inherit' });
  });

  it('exits 1 before starting, naming the variable on stderr', () => {
    const run = spawnSync(process.execPath, [main], {
      cwd: root,
      env: { PATH: process.env.PATH, PORT: 'abc', HERALD_DATA_DIR: 'memory://' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.equal(run.status, 1, run.stderr);
    assert.match(run.stderr, /\bPORT\b/);
    assert.match(run.stderr, /"abc"/);
    assert.equal(run.stdout, '');
    // A configuration mistake is one line, not a stack trace.
    assert.equal(run.stderr.trim().split('\n').length, 1);
  });
});
