/**
 * Tenant isolation sweep. Protocol A creates a resource of every kind; protocol B, with its own
 * resources, then calls every route of the OpenAPI document that takes an id with A's ids (404,
 * and A's resource is unchanged afterwards), every wallet route with A's wallet (B sees only its
 * own relation to it), and every list and report (never one of A's ids, and B's own counts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_TOKEN, call, isErrorBody, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { registeredWallet } from '../support/wallets.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { routesFrom, sampleOf, type Fixtures, type RouteSpec } from './support/route-table.js';
import { SIZES, TEST_TIMEOUT_MS } from './support/mode.js';

interface Tenant {
  protocol: TestProtocol;
  notification: string;
  sandboxNotification: string;
  schedules: string[];
  webhook: string;
  delivery: string;
  template: string;
  broadcast: string;
  wallet: string;
}

/**
 * Which of A's ids a path parameter takes, by the path's resource. A route that takes an id of a
 * kind not listed here fails the sweep: a new route must say whose resource it reads.
 */
function idFor(route: RouteSpec, param: string, a: Tenant): string | undefined {
  if (param === 'deliveryId') return a.delivery;
  if (param === 'version') return '1';
  if (param === 'wallet') return a.wallet;
  const prefixes: Array<[string, string]> = [
    ['/v1/notifications/', a.notification],
    ['/v1/schedule/', a.schedules[0]],
    ['/v1/webhooks/', a.webhook],
    ['/v1/templates/email/', a.template],
    ['/v1/broadcasts/', a.broadcast],
  ];
  return prefixes.find(([prefix]) => route.path.startsWith(prefix))?.[1];
}

/** Routes outside a protocol's tenancy, and why. */
const NOT_TENANT_SCOPED: Array<[RegExp, string]> = [
  [/^\/v1\/admin\//, 'operator API: the admin token sees every protocol by design'],
  [/^\/v1\/identities\/\{wallet\}$/, "erasure is signed by the wallet's key, not a protocol's"],
  [/^\/v1\/wallets\/\{wallet\}\/status$/, 'the identity registry is shared: whether a wallet can be reached, never its contacts'],
];

describe('tenant isolation sweep', () => {
  let gw: TestGateway;
  let receiver: Receiver;
  let routes: RouteSpec[];
  const tenants: Tenant[] = [];

  async function makeTenant(name: string): Promise<Tenant> {
    const protocol = await gw.createProtocol({ tier: 3, name });
    const key = protocol.apiKey;
    const ok = async (method: string, path: string, body?: unknown, as = key) => {
      const res = await call(gw.url, as, method, path, body);
      assert.ok(res.status < 300, `${name} ${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    const wallet = await registeredWallet(gw.url);
    const note = { wallet, subject: `${name} notification`, body: 'Hello', category: 'system' };
    const notification = (await ok('POST', '/v1/notify', note)).notificationId;
    const sandboxNotification = (await ok('POST', '/v1/notify', note, protocol.sandboxApiKey)).notificationId;
    const later = new Date(Date.now() + 86_400_000).toISOString();
    const schedules = [
      (await ok('POST', '/v1/schedule', { ...note, scheduledFor: later, timezone: 'UTC' })).id,
      (await ok('POST', '/v1/schedule/cron', { ...note, cronExpr: '0 9 * * 1', timezone: 'Europe/Paris' })).id,
    ];
    const webhook = (await ok('POST', '/v1/webhooks', { url: `${receiver.url}/${name}`, events: ['notification.delivered'] })).id;
    await ok('POST', `/v1/webhooks/${webhook}/test`);
    const delivery = (await ok('GET', `/v1/webhooks/${webhook}/deliveries`)).data[0].id;
    const templateBody = { name: `${name} template`, category: 'system', subjectTemplate: 'Hi {{name}}', htmlSource: '<p>{{name}}</p>', textSource: '{{name}}', serviceFooter: 'minimal' };
    const template = (await ok('POST', '/v1/templates/email', templateBody)).templateId;
    await ok('PUT', `/v1/templates/email/${template}`, { ...templateBody, subjectTemplate: 'Hello {{name}}' });
    await ok('POST', '/v1/subscriptions', { walletAddress: wallet, channels: ['email'] });
    const broadcast = (await ok('POST', '/v1/broadcast', { subject: `${name} broadcast`, body: 'All', category: 'system', receipt: false })).broadcast_id;
    return { protocol, notification, sandboxNotification, schedules, webhook, delivery, template, broadcast, wallet };
  }

  before(async () => {
    receiver = await startReceiver();
    gw = await startGateway({ env: { HERALD_ALLOW_PRIVATE_WEBHOOKS: 'true', HERALD_IP_RATE_LIMIT: '10000' } });
    routes = routesFrom((await call(gw.url, undefined, 'GET', '/openapi.json')).body).filter((r) => r.path.startsWith('/v1/'));
    for (let round = 0; round < SIZES.isolationRounds; round++) tenants.push(await makeTenant(`A${round}`), await makeTenant(`B${round}`));
  });
  after(async () => {
    await gw?.close();
    await receiver?.close();
  });

  /** Everything A has, as A reads it: must be the same after B's probes. */
  async function snapshot(a: Tenant) {
    const read = async (path: string) => {
      const res = await call(gw.url, a.protocol.apiKey, 'GET', path);
      assert.equal(res.status, 200, `A reads ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    const strip = (body: any) => JSON.parse(JSON.stringify(body, (k, v) => (['nextAttemptAt', 'completedAt', 'delivered_at', 'status', 'attempts', 'lastStatusCode', 'lastError', 'receipt_status'].includes(k) ? undefined : v)));
    return strip({
      notification: await read(`/v1/notifications/${a.notification}`),
      schedules: await Promise.all(a.schedules.map((id) => read(`/v1/schedule/${id}`))),
      webhooks: await read('/v1/webhooks'),
      template: await read(`/v1/templates/email/${a.template}`),
      subscription: await read(`/v1/subscriptions/${a.wallet}`),
      broadcast: await read(`/v1/broadcasts/${a.broadcast}`),
      scheduleStatuses: (await Promise.all(a.schedules.map((id) => read(`/v1/schedule/${id}`)))).map((s) => s.status),
      webhookActive: (await read('/v1/webhooks')).map((w: any) => w.isActive),
    });
  }

  // First: B's own request log must not yet hold B's probes of A's ids (the next test makes them).
  it("never lists another protocol's rows, in any list or report", { timeout: TEST_TIMEOUT_MS }, async (t) => {
    let checked = 0;
    for (let i = 0; i < tenants.length; i += 2) {
      const [a, b] = [tenants[i], tenants[i + 1]];
      // Every id A can see of its own (its broadcast's notifications included) is foreign to B.
      const foreign = new Set([a.protocol.id, a.sandboxNotification, ...a.schedules, a.webhook, a.delivery, a.template, a.broadcast]);
      for (const key of [a.protocol.apiKey, a.protocol.sandboxApiKey]) {
        for (const n of (await call(gw.url, key, 'GET', '/v1/notifications?limit=100')).body.data) foreign.add(n.notification_id);
      }
      const lists = routes.filter((r) => r.method === 'GET' && !/\{\w+\}/.test(r.path) && !NOT_TENANT_SCOPED.some(([p]) => p.test(r.path)));
      for (const path of [...lists.map((r) => r.path), `/v1/webhooks/${b.webhook}/deliveries`]) {
        for (const key of [b.protocol.apiKey, b.protocol.sandboxApiKey]) {
          const res = await call(gw.url, key, 'GET', `${path}?limit=100`);
          const text = JSON.stringify(res.body);
          checked += 1;
          assert.ok(res.status === 200, `GET ${path} as B: ${res.status} ${text}`);
          for (const id of foreign) assert.ok(!text.includes(id), `GET ${path} as B shows A's ${id}: ${text.slice(0, 300)}`);
        }
      }
      const audience = (await call(gw.url, b.protocol.apiKey, 'GET', '/v1/audience')).body;
      assert.equal(audience.broadcastableSubscribers, 1, `B's audience counts B's one subscriber, not A's: ${JSON.stringify(audience)}`);
      const own = (await call(gw.url, b.protocol.apiKey, 'GET', '/v1/notifications?limit=100')).body.total;
      const analytics = (await call(gw.url, b.protocol.apiKey, 'GET', '/v1/analytics')).body;
      assert.ok(analytics.total_sends <= own, `B's analytics count B's notifications only: ${JSON.stringify(analytics)} vs ${own}`);
    }
    t.diagnostic(`isolation lists: ${JSON.stringify({ listCalls: checked, leaks: 0 })}`);
  });

  it("answers 404 to another protocol's ids on every route that takes one, and changes nothing of it", { timeout: TEST_TIMEOUT_MS }, async (t) => {
    let probes = 0;
    const skipped: string[] = [];
    for (let i = 0; i < tenants.length; i += 2) {
      const [a, b] = [tenants[i], tenants[i + 1]];
      const before = await snapshot(a);
      const fixtures: Fixtures = { apiKey: b.protocol.apiKey, sandboxKey: b.protocol.sandboxApiKey, adminToken: ADMIN_TOKEN, wallet: b.wallet, ids: [], receiverUrl: `${receiver.url}/B` };
      for (const route of routes.filter((r) => /\{\w+\}/.test(r.path))) {
        const reason = NOT_TENANT_SCOPED.find(([pattern]) => pattern.test(route.path));
        if (reason) {
          if (i === 0) skipped.push(`${route.method} ${route.path}: ${reason[1]}`);
          continue;
        }
        const params = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
        const path = route.path.replace(/\{(\w+)\}/g, (_, param: string) => {
          const id = idFor(route, param, a);
          assert.ok(id, `${route.method} ${route.path} takes {${param}}: the sweep must be told whose resource that is`);
          return encodeURIComponent(id);
        });
        const body = route.body ? sampleOf(route.body, fixtures) : undefined;
        for (const key of [b.protocol.apiKey, b.protocol.sandboxApiKey]) {
          probes += 1;
          const res = await call(gw.url, key, route.method, path, body);
          if (params.includes('wallet')) {
            // A wallet is a shared identity: B sees its own relation to it, never A's.
            assert.ok(res.status === 200, `${route.method} ${path} as B: ${res.status} ${JSON.stringify(res.body)}`);
            assert.equal(res.body.subscribed, false, `${route.method} ${path} as B shows no subscription`);
            assert.deepEqual(res.body.channels, []);
          } else {
            assert.equal(res.status, 404, `${route.method} ${path} as B: ${res.status} ${JSON.stringify(res.body)}`);
            assert.ok(isErrorBody(res.body), JSON.stringify(res.body));
          }
        }
      }
      assert.deepEqual(await snapshot(a), before, "none of B's calls changed A's resources");
    }
    t.diagnostic(`isolation probes: ${JSON.stringify({ probes, leaks: 0, outOfScope: skipped })}`);
  });
});
