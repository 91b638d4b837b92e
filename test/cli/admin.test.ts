import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_TOKEN, call, startGateway, type TestGateway } from '../support/gateway.js';
import { newWallet, register, verify } from '../identities/wallet-key.js';
import { ensureBuilt, runCli, scratchHome } from './run-cli.js';

describe('herald admin', () => {
  let gw: TestGateway;
  let scratch: ReturnType<typeof scratchHome>;
  let env: Record<string, string>;
  const admin = (args: string[], extra: Record<string, string | undefined> = {}) => runCli(['admin', ...args], { env: { ...env, ...extra } });

  before(async () => {
    ensureBuilt();
    gw = await startGateway({ env: { HERALD_AUTH_CACHE_MS: '0' } });
    scratch = scratchHome();
    env = { HOME: scratch.home, XDG_CONFIG_HOME: scratch.config, HERALD_BASE_URL: gw.url, HERALD_ADMIN_TOKEN: ADMIN_TOKEN };
  });
  after(async () => {
    await gw.close();
    scratch.cleanup();
  });

  it('protocols create --json prints {id, apiKey, sandboxApiKey} and the key works', async () => {
    const res = await admin(['protocols', 'create', '--name', 'Acme', '--tier', '1', '--json']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stderr, '');
    const created = res.json();
    assert.match(created.id, /^proto_/);
    assert.match(created.apiKey, /^hrld_live_[A-Za-z0-9]{40}$/);
    assert.match(created.sandboxApiKey, /^hrld_test_[A-Za-z0-9]{40}$/);
    assert.equal(created.tier, 1);
    assert.equal(created.overageEnabled, false);

    const info = await runCli(['protocol', 'info', '--json'], { env: { ...env, HERALD_API_KEY: created.apiKey } });
    assert.equal(info.code, 0, info.stderr);
    assert.deepEqual(Object.keys(info.json()).sort(), ['id', 'name', 'sends_this_period', 'subscription_expires_at', 'tier', 'tier_name']);
    assert.equal(info.json().id, created.id);
    assert.equal(info.json().tier_name, 'Growth');
  });

  it('accepts tier names, --overage and --expires-at, and the flags anywhere on the line', async () => {
    const res = await runCli(['--json', 'admin', '--admin-token', ADMIN_TOKEN, 'protocols', 'create', '--tier', 'Scale', '--overage', '--name', 'Big', '--expires-at', '2030-01-02'], {
      env: { ...env, HERALD_ADMIN_TOKEN: undefined },
    });
    assert.equal(res.code, 0, res.stderr);
    const created = res.json();
    assert.equal(created.tier, 2);
    assert.equal(created.overageEnabled, true);
    assert.equal(created.subscriptionExpiresAt, '2030-01-02T00:00:00.000Z');
  });

  it('prints the keys for people, with a warning that they are shown once', async () => {
    const res = await admin(['protocols', 'create', '--name', 'Human', '--tier', 'developer']);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /Created protocol Human/);
    assert.match(res.stdout, /live key\s+hrld_live_/);
    assert.match(res.stdout, /sandbox key\s+hrld_test_/);
    assert.match(res.stderr, /not shown again/);
  });

  it('protocols list, get and update', async () => {
    const { id } = await gw.createProtocol({ tier: 0, name: 'Listed' });
    const list = await admin(['protocols', 'list', '--limit', '100', '--json']);
    assert.equal(list.code, 0, list.stderr);
    assert.equal(list.json().page, 1);
    assert.ok(list.json().data.some((p: any) => p.id === id));
    assert.ok(list.json().total >= 1);

    const got = await admin(['protocols', 'get', id, '--json']);
    assert.equal(got.code, 0, got.stderr);
    assert.equal(got.json().name, 'Listed');

    const updated = await admin(['protocols', 'update', id, '--tier', 'growth', '--name', 'Renamed', '--overage', '--json']);
    assert.equal(updated.code, 0, updated.stderr);
    assert.deepEqual([updated.json().tier, updated.json().name, updated.json().overageEnabled], [1, 'Renamed', true]);

    const off = await admin(['protocols', 'update', id, '--no-overage', '--json']);
    assert.equal(off.json().overageEnabled, false);
    assert.equal(off.json().tier, 1);
  });

  it('keys create, list and revoke; a revoked key then exits 4', async () => {
    const protocol = await gw.createProtocol({ tier: 3 });
    const created = await admin(['keys', 'create', protocol.id, '--environment', 'sandbox', '--json']);
    assert.equal(created.code, 0, created.stderr);
    const key = created.json();
    assert.match(key.apiKey, /^hrld_test_/);
    assert.equal(key.environment, 'sandbox');
    assert.equal(key.revokedAt, null);

    const list = await admin(['keys', 'list', protocol.id, '--json']);
    assert.deepEqual(list.json().data.map((k: any) => k.environment).sort(), ['production', 'sandbox', 'sandbox']);
    assert.ok(!list.stdout.includes(key.apiKey), 'listing never shows a whole key');

    const unconfirmed = await admin(['keys', 'revoke', protocol.id, key.id]);
    assert.equal(unconfirmed.code, 2, 'not a TTY and no --yes: refuses');
    assert.match(unconfirmed.stderr, /--yes/);
    assert.equal((await call(gw.url, key.apiKey, 'GET', '/v1/usage')).status, 200);

    const revoked = await admin(['keys', 'revoke', protocol.id, key.id, '--yes', '--json']);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.ok(revoked.json().revokedAt);
    const refused = await runCli(['usage'], { env: { ...env, HERALD_API_KEY: key.apiKey } });
    assert.equal(refused.code, 4);
  });

  it("sandbox messages lists what the capture provider kept, the gateway's verification codes included", async () => {
    const holder = newWallet();
    assert.equal((await register(gw, holder, { email: 'cli-holder@example.com' })).status, 201);
    const res = await admin(['sandbox', 'messages', '--protocol-id', 'herald', '--wallet', holder.address, '--json']);
    assert.equal(res.code, 0, res.stderr);
    const { data, total } = res.json();
    assert.equal(total, 1);
    assert.deepEqual([data[0].protocolId, data[0].channel, data[0].wallet], ['herald', 'email', holder.address]);
    const code = /\b(\d{6})\b/.exec(data[0].text)![1];
    assert.equal((await verify(gw, holder.address, 'email', code)).status, 200);
    const human = await admin(['sandbox', 'messages', '--protocol-id', 'herald', '--wallet', holder.address]);
    assert.match(human.stdout, new RegExp(`herald  email  ${holder.address}`));
    assert.match(human.stdout, /Your Herald verification code is \d{6}/);
    assert.match(human.stdout, /page 1, 1 shown of 1/);
  });

  it('exits 3 for an unknown protocol', async () => {
    const res = await admin(['protocols', 'get', 'proto_00000000000000000000000000', '--json']);
    assert.equal(res.code, 3);
    assert.equal(res.stdout, '');
    assert.equal(res.errorJson().error.code, 'PROTOCOL_NOT_FOUND');
    assert.equal(res.errorJson().error.exitCode, 3);
  });

  it('exits 4 with a wrong admin token, and without one', async () => {
    const wrong = await admin(['protocols', 'list'], { HERALD_ADMIN_TOKEN: 'not-the-admin-token-at-all' });
    assert.equal(wrong.code, 4);
    assert.match(wrong.stderr, /INVALID_ADMIN_TOKEN/);
    const missing = await admin(['protocols', 'list', '--json'], { HERALD_ADMIN_TOKEN: undefined });
    assert.equal(missing.code, 4);
    assert.equal(missing.errorJson().error.code, 'NO_ADMIN_TOKEN');
  });

  it('exits 2 on bad usage, before or after reaching the gateway', async () => {
    const missingFlag = await admin(['protocols', 'create', '--name', 'x']);
    assert.equal(missingFlag.code, 2);
    assert.match(missingFlag.stderr, /--tier/);

    const badTier = await admin(['protocols', 'create', '--name', 'x', '--tier', '7', '--json']);
    assert.equal(badTier.code, 2);
    assert.equal(badTier.stdout, '');
    assert.equal(badTier.errorJson().error.code, 'USAGE');
    assert.match(badTier.errorJson().error.message, /tier/);

    const nothing = await admin(['protocols', 'update', 'proto_x']);
    assert.equal(nothing.code, 2);

    // Rejected by the gateway's validation (name longer than 200 characters).
    const tooLong = await admin(['protocols', 'create', '--name', 'n'.repeat(201), '--tier', '0', '--json']);
    assert.equal(tooLong.code, 2);
    assert.equal(tooLong.errorJson().error.code, 'VALIDATION_ERROR');
  });
});
