/** The OpenAPI 3.1 document generated from the route schemas, served at GET /openapi.json. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { openApiPath, registeredRoutes, type RegisteredRoute } from './registered-routes.js';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

describe('GET /openapi.json', () => {
  let gateway: TestGateway;
  let doc: any;
  let v1Routes: RegisteredRoute[];

  before(async () => {
    gateway = await startGateway();
    const res = await fetch(`${gateway.url}/openapi.json`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    doc = await res.json();
    // /v1/schedule/cron's other methods are routed only to answer 405 (schedules/routes.ts).
    const answersOnly405 = (route: { method: string; path: string }) => route.path === '/v1/schedule/cron' && route.method !== 'POST';
    v1Routes = registeredRoutes(gateway.herald.app!).filter((route) => route.path.startsWith('/v1/') && route.method !== 'HEAD' && !answersOnly405(route));
  });

  after(() => gateway?.close());

  const operations = () =>
    Object.entries<any>(doc.paths).flatMap(([path, item]) => METHODS.filter((m) => item[m]).map((method) => ({ path, method, op: item[method] })));

  it('is public and an OpenAPI 3.1 document', () => {
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.title, 'Herald notification gateway');
    assert.equal(typeof doc.info.version, 'string');
    assert.ok(Array.isArray(doc.servers) && doc.servers[0].url);
    assert.equal(typeof doc.paths, 'object');
  });

  it('declares the API key and admin token bearer schemes, the key being the default', () => {
    assert.deepEqual(
      { type: doc.components.securitySchemes.apiKey.type, scheme: doc.components.securitySchemes.apiKey.scheme },
      { type: 'http', scheme: 'bearer' },
    );
    assert.deepEqual(
      { type: doc.components.securitySchemes.adminToken.type, scheme: doc.components.securitySchemes.adminToken.scheme },
      { type: 'http', scheme: 'bearer' },
    );
    assert.deepEqual(doc.security, [{ apiKey: [] }]);
  });

  it('marks no parameter or body field with a default as required', () => {
    const list = doc.paths['/v1/notifications'].get.parameters;
    for (const name of ['page', 'limit']) {
      const parameter = list.find((p: any) => p.name === name);
      assert.ok(parameter.schema.default !== undefined, name);
      assert.equal(parameter.required, undefined, `${name} has a default and is optional`);
    }
    for (const { path, method, op } of operations()) {
      for (const p of op.parameters ?? []) if (p.schema?.default !== undefined) assert.ok(!p.required, `${method} ${path}: ${p.name}`);
      const body = op.requestBody?.content?.['application/json']?.schema;
      for (const name of body?.required ?? []) assert.equal(body.properties?.[name]?.default, undefined, `${method} ${path}: body ${name}`);
    }
    const cron = doc.paths['/v1/schedule/cron'].post.requestBody.content['application/json'].schema;
    assert.ok(!cron.required.includes('timezone'));
  });

  it('documents the rate-limit and request-id headers on every response, and Retry-After on 429', () => {
    for (const { path, method, op } of operations()) {
      for (const [status, response] of Object.entries<any>(op.responses)) {
        const names = Object.keys(response.headers ?? {});
        for (const name of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-Request-Id']) {
          assert.ok(names.includes(name), `${method} ${path} ${status}: ${name}`);
        }
        if (status === '429') assert.ok(names.includes('Retry-After'), `${method} ${path} 429: Retry-After`);
      }
    }
    assert.equal(doc.components.headers['X-RateLimit-Reset'].schema.type, 'integer');
    // A 401 for a key or the admin token says how to authenticate; a wallet signature's does not.
    assert.ok(doc.paths['/v1/usage'].get.responses['401'].headers['WWW-Authenticate']);
    assert.ok(doc.paths['/v1/admin/protocols'].post.responses['401'].headers['WWW-Authenticate']);
    assert.equal(doc.paths['/v1/identities'].post.responses['401'].headers['WWW-Authenticate'], undefined);
  });

  it('documents the Idempotency-Key header, its 409 and Idempotent-Replayed on the calls that create something', () => {
    assert.ok(doc.paths['/v1/identities'].post.responses['409'], 'a registration racing a verification');
    const keyed: [string, string][] = [
      ['/v1/broadcast', 'post'],
      ['/v1/schedule', 'post'],
      ['/v1/schedule/cron', 'post'],
      ['/v1/templates/email', 'post'],
      ['/v1/templates/email/{id}', 'put'],
      ['/v1/templates/email/{id}/versions/{version}/restore', 'post'],
      ['/v1/webhooks', 'post'],
      ['/v1/webhooks/{id}/rotate-secret', 'post'],
    ];
    for (const [path, method] of keyed) {
      const op = doc.paths[path][method];
      assert.ok(op.responses['409'], `${path}: 409`);
      const header = op.parameters.find((p: any) => p.in === 'header' && p.name === 'idempotency-key');
      assert.ok(header, `${path}: Idempotency-Key`);
      assert.equal(header.required, false);
      const success = Object.entries<any>(op.responses).filter(([status]) => status.startsWith('2'));
      assert.ok(success.length > 0);
      for (const [status, response] of success) assert.ok(response.headers['Idempotent-Replayed'], `${path} ${status}`);
    }
    assert.equal(doc.paths['/v1/notify'].post.responses['202'].headers['Idempotent-Replayed'], undefined, 'sends answer duplicate instead');
  });

  it('lists the answers every route of a kind gives: 400, 429, 431, 500 and 503 everywhere, 408, 413 and 415 where a body is read, 414 for path parameters', () => {
    for (const { path, method, op } of operations()) {
      if (path === '/mcp') continue;
      const where = `${method.toUpperCase()} ${path}`;
      const statuses = Object.keys(op.responses);
      // 400: a request without Host, or with several Authorization headers, on any route; 431: headers over 16 KB.
      for (const status of ['400', '429', '431', '500', '503']) assert.ok(statuses.includes(status), `${where}: ${status}`);
      if (method !== 'get') for (const status of ['408', '413', '415']) assert.ok(statuses.includes(status), `${where}: ${status}`);
      if (path.includes('{')) assert.ok(statuses.includes('414'), `${where}: 414`);
      // /health answers 503 with its own report of what is down.
      for (const status of statuses.filter((s) => s.startsWith('4') || (s.startsWith('5') && path !== '/health'))) {
        assert.equal(op.responses[status].content['application/json'].schema.$ref, '#/components/schemas/Error', `${where} ${status}`);
      }
    }
    assert.ok(doc.paths['/v1/identities'].post.responses['409'], 'a registration racing a verification');
    for (const path of ['/v1/broadcast', '/v1/schedule', '/v1/schedule/cron']) {
      assert.ok(doc.paths[path].post.responses['409'], `${path}: a reused Idempotency-Key`);
      const header = doc.paths[path].post.parameters.find((p: any) => p.name === 'idempotency-key');
      assert.ok(new RegExp(header.schema.pattern).test('order-42 retry') && !new RegExp(header.schema.pattern).test('café'));
    }
    assert.equal(doc.paths['/v1/webhooks/{id}/rotate-secret'].post.requestBody.required, false, 'no body is the defaults');
    // The wallet format is this server's own: the document spells out the base58 form it implies.
    const walletParam = doc.paths['/v1/wallets/{wallet}/status'].get.parameters.find((p: any) => p.name === 'wallet');
    const notifyWallet = doc.paths['/v1/notify'].post.requestBody.content['application/json'].schema.properties.wallet;
    for (const schema of [walletParam.schema, notifyWallet]) {
      assert.equal(schema.format, 'solana-wallet');
      const pattern = new RegExp(schema.pattern);
      assert.ok(pattern.test('7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU') && !pattern.test('0xABC') && !pattern.test('x'));
    }
    assert.equal(doc.paths['/v1/templates/email/{id}'].put.requestBody.content['application/json'].schema.minProperties, 1);
  });

  it('gives every operation a unique operationId made from its method and path', () => {
    const ids = operations().map(({ op }) => op.operationId);
    assert.equal(new Set(ids).size, ids.length);
    assert.equal(doc.paths['/v1/notifications/{id}'].get.operationId, 'getNotificationsById');
    assert.equal(doc.paths['/v1/webhooks/{id}/rotate-secret'].post.operationId, 'postWebhooksByIdRotateSecret');
    assert.equal(doc.paths['/health'].get.operationId, 'getHealth');
  });

  it('names the shared Error schema and references it from error responses', () => {
    const error = doc.components.schemas.Error;
    assert.deepEqual(error.required, ['statusCode', 'error', 'message', 'code']);
    assert.deepEqual(Object.keys(error.properties), ['statusCode', 'error', 'message', 'code']);
    const errorRefs = JSON.stringify(doc.paths).split('"$ref":"#/components/schemas/Error"').length - 1;
    assert.ok(errorRefs > 10, `Error referenced ${errorRefs} times`);
    assert.equal(doc.paths['/v1/notify'].post.responses['400'].content['application/json'].schema.$ref, '#/components/schemas/Error');
  });

  it('resolves every $ref inside the document', () => {
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((match) => match[1]);
    assert.ok(refs.length > 0);
    for (const ref of new Set(refs)) {
      assert.ok(ref.startsWith('#/'), ref);
      const target = ref
        .slice(2)
        .split('/')
        .reduce<any>((node, key) => node?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
      assert.ok(target, `${ref} does not resolve`);
    }
  });

  it('gives every operation tags, a summary, responses and its path parameters', () => {
    for (const { path, method, op } of operations()) {
      const where = `${method.toUpperCase()} ${path}`;
      assert.ok(op.tags?.length, `${where} has no tag`);
      assert.ok(op.summary, `${where} has no summary`);
      assert.ok(Object.keys(op.responses ?? {}).length, `${where} has no response`);
      const declared = (op.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name);
      const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
      assert.deepEqual(declared.sort(), inPath.sort(), `${where} path parameters`);
      for (const name of Object.keys(op.security?.[0] ?? {})) assert.ok(doc.components.securitySchemes[name], `${where}: unknown scheme ${name}`);
    }
  });

  it('says which operations need no key and which need the admin token', () => {
    assert.deepEqual(doc.paths['/health'].get.security, []);
    assert.deepEqual(doc.paths['/v1/identities/challenge'].post.security, []);
    assert.deepEqual(doc.paths['/mcp'].post.security, []);
    assert.deepEqual(doc.paths['/v1/admin/protocols'].post.security, [{ adminToken: [] }]);
    assert.equal(doc.paths['/v1/notify'].post.security, undefined, 'key routes inherit the default');
  });

  it('lists every /v1 route Fastify has registered', () => {
    assert.ok(v1Routes.length > 30, `found ${v1Routes.length} routes`);
    const missing = v1Routes.filter((route) => !doc.paths[openApiPath(route.path)]?.[route.method.toLowerCase()]);
    assert.deepEqual(missing, [], 'routes missing from /openapi.json');
  });

  it('agrees with the document the app builds in process', () => {
    assert.deepEqual(Object.keys(doc.paths).sort(), Object.keys((gateway.herald.app!.swagger() as any).paths).sort());
  });

  it('documents the MCP endpoint but not the internal pages', () => {
    const mcp = doc.paths['/mcp'].post;
    assert.ok(mcp);
    assert.equal(doc.paths['/mcp'].get, undefined);
    // What it takes and answers, though the route reads its body as text itself.
    assert.deepEqual(mcp.requestBody.content['application/json'].schema.oneOf.map((s: any) => s.type), ['object', 'array']);
    assert.deepEqual(Object.keys(mcp.responses).sort(), ['200', '202', '400', '406', '413', '415', '429', '500']);
    assert.match(mcp.description, /initialize, ping, tools\/list, tools\/call/);
    assert.deepEqual(mcp.responses['400'].content['application/json'].schema.oneOf.map((s: any) => s.type), ['object', 'array']);
    for (const hidden of ['/openapi.json', '/docs']) assert.equal(doc.paths[hidden], undefined, hidden);
  });
});
