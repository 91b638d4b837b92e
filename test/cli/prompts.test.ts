/**
 * Prompts appear only on a terminal, so these tests run the CLI under a pseudo-terminal made by
 * util-linux `script`, type once the prompt shows, and read what the terminal displayed.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN_TOKEN, call, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { ensureBuilt, hasScript, onTerminal, scratchHome } from './run-cli.js';

describe('herald prompts on a terminal', { skip: hasScript ? false : 'util-linux `script` is not installed' }, () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  let scratch: ReturnType<typeof scratchHome>;
  let env: Record<string, string>;

  before(async () => {
    ensureBuilt();
    gw = await startGateway({ env: { HERALD_AUTH_CACHE_MS: '0' } });
    acme = await gw.createProtocol({ tier: 3 });
    scratch = scratchHome();
    env = { HOME: scratch.home, XDG_CONFIG_HOME: scratch.config, HERALD_BASE_URL: gw.url, HERALD_ADMIN_TOKEN: ADMIN_TOKEN };
  });
  after(async () => {
    await gw.close();
    scratch.cleanup();
  });

  it('auth login asks for the key without echoing it', async () => {
    const { code, screen } = await onTerminal(['auth', 'login'], env, 'Paste your API key', `${acme.apiKey}\r`);
    assert.equal(code, 0, screen);
    assert.ok(!screen.includes(acme.apiKey), 'the typed key never shows on the terminal');
    assert.match(screen, /Logged in/);
    const file = path.join(scratch.config, 'herald', 'config.json');
    assert.equal(JSON.parse(readFileSync(file, 'utf8')).apiKey, acme.apiKey);
  });

  it('Ctrl-C at the key prompt cancels with exit 2', async () => {
    const { code, screen } = await onTerminal(['auth', 'login'], { ...env, XDG_CONFIG_HOME: path.join(scratch.home, 'other') }, 'Paste your API key', 'hrld_\u0003');
    assert.equal(code, 2, screen);
    assert.match(screen, /Cancelled/);
    assert.equal(existsSync(path.join(scratch.home, 'other', 'herald', 'config.json')), false);
  });

  it('keys revoke asks first: no keeps the key (exit 2), yes revokes it', async () => {
    const keys = await call(gw.url, ADMIN_TOKEN, 'GET', `/v1/admin/protocols/${acme.id}/keys`);
    const sandbox = keys.body.data.find((k: any) => k.environment === 'sandbox');
    const args = ['admin', 'keys', 'revoke', acme.id, sandbox.id];

    const declined = await onTerminal(args, env, '[y/N]', 'n\r');
    assert.equal(declined.code, 2, declined.screen);
    assert.equal((await call(gw.url, acme.sandboxApiKey, 'GET', '/v1/usage')).status, 200);

    const accepted = await onTerminal(args, env, '[y/N]', 'y\r');
    assert.equal(accepted.code, 0, accepted.screen);
    assert.match(accepted.screen, /Revoked key/);
    assert.equal((await call(gw.url, acme.sandboxApiKey, 'GET', '/v1/usage')).status, 401);
  });

  it('colours a terminal, and NO_COLOR turns that off', async () => {
    const coloured = await onTerminal(['doctor', '--api-key', acme.apiKey], env, '\u0000never', '');
    assert.equal(coloured.code, 0, coloured.screen);
    assert.ok(coloured.screen.includes('\x1b[32m✓'), coloured.screen);
    const plain = await onTerminal(['doctor', '--api-key', acme.apiKey], { ...env, NO_COLOR: '1' }, '\u0000never', '');
    assert.equal(plain.code, 0, plain.screen);
    assert.ok(!plain.screen.includes('\x1b['), plain.screen);
  });
});
