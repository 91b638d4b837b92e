import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Herald } from '../../packages/sdk/src/client.js';
import { ADMIN_TOKEN, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { registeredWallet } from '../support/wallets.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { ensureBuilt, runCli, scratchHome } from './run-cli.js';

describe('herald list commands with --all', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  let wallet: string;
  let receiver: Receiver;
  let scratch: ReturnType<typeof scratchHome>;
  let env: Record<string, string>;
  const herald = (args: string[], extra: Record<string, string> = {}) => runCli(args, { env: { ...env, ...extra } });
  const ok = async (args: string[], extra: Record<string, string> = {}) => {
    const res = await herald([...args, '--json'], extra);
    assert.equal(res.code, 0, `${args.join(' ')}: ${res.stderr}`);
    return res.json();
  };
  const ids = (items: { id?: string; notification_id?: string }[]) => items.map((item) => item.id ?? item.notification_id);

  before(async () => {
    ensureBuilt();
    gw = await startGateway({ env: { HERALD_WORKER_POLL_MS: '50', HERALD_IP_RATE_LIMIT: '10000', HERALD_ALLOW_PRIVATE_WEBHOOKS: 'true' } });
    acme = await gw.createProtocol({ tier: 3 });
    wallet = await registeredWallet(gw.url, { email: 'holder@example.com' });
    receiver = await startReceiver();
    scratch = scratchHome();
    env = { HOME: scratch.home, XDG_CONFIG_HOME: scratch.config, HERALD_BASE_URL: gw.url, HERALD_API_KEY: acme.sandboxApiKey };
    const sandbox = new Herald({ apiKey: acme.sandboxApiKey, baseUrl: gw.url });
    await sandbox.notifications.sendBulk(Array.from({ length: 23 }, (_, i) => ({ wallet, subject: `Alert ${i}`, body: 'Hello', category: 'system' as const })));
    const deadline = Date.now() + 20_000;
    while ((await sandbox.sandbox.messages()).total < 23) {
      assert.ok(Date.now() < deadline, 'the messages were not captured in time');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
  after(async () => {
    await receiver.close();
    await gw.close();
    scratch.cleanup();
  });

  it('notify list and sandbox messages read every page, as JSON and as a table', async () => {
    const onePage = await ok(['notify', 'list', '--limit', '100']);
    assert.equal(onePage.data.length, 23);
    const all = await ok(['notify', 'list', '--all', '--limit', '10']);
    assert.deepEqual(Object.keys(all).sort(), ['data', 'total']);
    assert.equal(all.total, 23);
    assert.deepEqual(ids(all.data), ids(onePage.data));
    const table = await herald(['notify', 'list', '--all', '--limit', '7']);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /23 shown \(every page\)/);
    for (const id of ids(all.data)) assert.ok(table.stdout.includes(id!), `${id} is in the table`);

    const messages = await ok(['sandbox', 'messages', '--all', '--limit', '10']);
    assert.deepEqual(ids(messages.data), ids((await ok(['sandbox', 'messages', '--limit', '100'])).data));
    assert.equal(messages.total, 23);
    const operator = await ok(['admin', 'sandbox', 'messages', '--all', '--limit', '10', '--protocol-id', acme.id], { HERALD_ADMIN_TOKEN: ADMIN_TOKEN });
    assert.deepEqual(ids(operator.data), ids(messages.data));
  });

  it('schedule list, webhook deliveries and admin protocols list take --all', async () => {
    const live = { HERALD_API_KEY: acme.apiKey };
    for (let i = 0; i < 3; i++) await ok(['schedule', 'cron', '--wallet', wallet, '--subject', `Report ${i}`, '--body', 'Weekly', '--category', 'system', '--cron', `${i} 9 * * 1`], live);
    const schedules = await ok(['schedule', 'list', '--all', '--limit', '2'], live);
    assert.equal(schedules.items.length, 3);
    assert.deepEqual(ids(schedules.items), ids((await ok(['schedule', 'list'], live)).items));

    const endpoint = await ok(['webhook', 'create', '--url', receiver.url, '--events', 'notification.delivered'], live);
    for (let i = 0; i < 3; i++) await ok(['webhook', 'test', endpoint.id], live);
    const deliveries = await ok(['webhook', 'deliveries', endpoint.id, '--all', '--limit', '2'], live);
    assert.deepEqual(ids(deliveries.data), ids((await ok(['webhook', 'deliveries', endpoint.id], live)).data));
    assert.equal(deliveries.total, 3);

    const protocols = await ok(['admin', 'protocols', 'list', '--all', '--limit', '1'], { HERALD_ADMIN_TOKEN: ADMIN_TOKEN });
    assert.deepEqual(ids(protocols.data), ids((await ok(['admin', 'protocols', 'list'], { HERALD_ADMIN_TOKEN: ADMIN_TOKEN })).data));
  });

  it('refuses --all with --page as a usage error, and the request log has no --all', async () => {
    for (const args of [['notify', 'list'], ['schedule', 'list'], ['sandbox', 'messages'], ['webhook', 'deliveries', 'wh_x'], ['admin', 'protocols', 'list']]) {
      const res = await herald([...args, '--all', '--page', '2', '--json'], { HERALD_ADMIN_TOKEN: ADMIN_TOKEN });
      assert.equal(res.code, 2, args.join(' '));
      assert.match(res.errorJson().error.message, /--page or --all, not both/);
    }
    assert.equal((await herald(['requests', '--all', '--json'])).code, 2);
  });
});
