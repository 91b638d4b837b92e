import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { HeraldAdmin } from './client.js';
import { HeraldApiError, HeraldNetworkError } from './errors.js';
import { RequestCore, responseOf, type CoreOptions, type RequestOptions } from './request.js';
import { Broadcasts, type BroadcastParams } from './resources/broadcasts.js';
import { HealthResource } from './resources/health.js';
import { Notifications } from './resources/notifications.js';
import { Schedules, type OneTimeScheduleParams } from './resources/schedules.js';
import { Templates } from './resources/templates.js';
import { Webhooks } from './resources/webhook-endpoints.js';
import { SDK_VERSION } from './version.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A local HTTP server answering from a script of handlers, one per request (the last repeats). */
class ScriptedServer {
  seen: Seen[] = [];
  script: ((res: ServerResponse) => void)[] = [];
  private server!: Server;
  url = '';

  async start() {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        this.seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
        const handler = this.script[Math.min(this.seen.length - 1, this.script.length - 1)];
        handler(res);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  reset(...script: ((res: ServerResponse) => void)[]) {
    this.seen = [];
    this.script = script;
  }

  async stop() {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  (res: ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
const errorJson = (status: number, code: string, message: string, headers: Record<string, string> = {}) =>
  json(status, { statusCode: status, error: 'Reason', message, code }, headers);

/** An answer that fits a template's shape and a created template's. */
const TEMPLATE = { templateId: 'tmpl_1', id: 'tmpl_1', version: 2, versions: [{ version: 1 }, { version: 2 }] };

describe('RequestCore', () => {
  const server = new ScriptedServer();
  let sleeps: number[];

  before(() => server.start());
  after(() => server.stop());

  function core(options: CoreOptions = {}) {
    sleeps = [];
    return new RequestCore({
      baseUrl: `${server.url}/`,
      token: 'hrld_test_key',
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      random: () => 0,
      ...options,
    });
  }

  it('sends bearer auth, JSON and a User-Agent; skips undefined query values', async () => {
    server.reset(json(200, { ok: true }));
    const result = await core().request<{ ok: boolean }>({
      method: 'POST',
      path: '/v1/things',
      query: { page: 2, endpoint: '/v1/x y', statusCode: undefined },
      body: { name: 'n' },
    });
    assert.deepEqual(result, { ok: true });
    const [seen] = server.seen;
    assert.equal(seen.url, '/v1/things?page=2&endpoint=%2Fv1%2Fx+y');
    assert.equal(seen.headers.authorization, 'Bearer hrld_test_key');
    assert.equal(seen.headers['content-type'], 'application/json');
    assert.equal(seen.headers['user-agent'], `herald-sdk-js/${SDK_VERSION}`);
    assert.equal(seen.headers['idempotency-key'], undefined);
    assert.deepEqual(JSON.parse(seen.body), { name: 'n' });
  });

  it('keeps the answer a result came in: status, headers, request id and rate limit (responseOf)', async () => {
    const rate = { 'x-request-id': 'req-7', 'x-ratelimit-limit': '20', 'x-ratelimit-remaining': '19', 'x-ratelimit-reset': '1790000001' };
    server.reset(errorJson(503, 'SERVICE_UNAVAILABLE', 'down'), json(202, { queued: true }, rate), json(200, [{ id: 'wh_1' }], { 'x-request-id': 'req-8' }));
    const sent = await core().request({ method: 'GET', path: '/v1/usage' });
    assert.deepEqual(sent, { queued: true }, 'the info is not among the result’s own properties');
    assert.deepEqual(JSON.parse(JSON.stringify(sent)), { queued: true });
    const info = responseOf(sent)!;
    assert.equal(info.statusCode, 202, 'the answer that resolved the call, after a retry');
    assert.equal(info.attempts, 2);
    assert.equal(info.requestId, 'req-7');
    assert.deepEqual(info.rateLimit, { limit: 20, remaining: 19, reset: 1790000001 });
    assert.equal(info.headers.get('content-type'), 'application/json');
    // A bare array answer too; without the three rate-limit headers, no rateLimit.
    const list = await core().request({ method: 'GET', path: '/v1/webhooks' });
    assert.deepEqual([responseOf(list)?.statusCode, responseOf(list)?.requestId, responseOf(list)?.rateLimit, responseOf(list)?.attempts], [200, 'req-8', undefined, 1]);
    // Nothing for what no answer made.
    assert.equal(responseOf({ queued: true }), undefined);
    assert.equal(responseOf(undefined), undefined);
    assert.equal(responseOf('text'), undefined);
  });

  it('retries a GET on 503 with exponential backoff, then succeeds', async () => {
    server.reset(errorJson(503, 'SERVICE_UNAVAILABLE', 'down'), errorJson(503, 'SERVICE_UNAVAILABLE', 'down'), json(200, { n: 1 }));
    assert.deepEqual(await core().request({ method: 'GET', path: '/v1/usage' }), { n: 1 });
    assert.equal(server.seen.length, 3);
    assert.deepEqual(sleeps, [250, 500]);
  });

  it('honours Retry-After on 429, for a POST too', async () => {
    server.reset(errorJson(429, 'RATE_LIMIT_EXCEEDED', 'slow down', { 'retry-after': '2' }), json(202, { queued: true }));
    assert.deepEqual(await core().request({ method: 'POST', path: '/v1/notify', body: {} }), { queued: true });
    assert.equal(server.seen.length, 2);
    assert.deepEqual(sleeps, [2000]);
  });

  it('throws the 429 as a typed error once retries run out', async () => {
    server.reset(errorJson(429, 'RATE_LIMIT_EXCEEDED', 'slow down', { 'retry-after': '1', 'x-request-id': 'req-7' }));
    const error: any = await core({ maxRetries: 3 }).request({ method: 'GET', path: '/v1/usage' }).catch((e: any) => e);
    assert.ok(error instanceof HeraldApiError);
    assert.equal(error.statusCode, 429);
    assert.equal(error.code, 'RATE_LIMIT_EXCEEDED');
    assert.equal(error.message, 'slow down');
    assert.equal(error.requestId, 'req-7');
    assert.equal(error.retryAfterSeconds, 1);
    assert.equal(server.seen.length, 4);
    assert.deepEqual(sleeps, [1000, 1000, 1000]);
  });

  it('does not retry a 400, and exposes statusCode, code and message', async () => {
    server.reset(errorJson(400, 'VALIDATION_ERROR', 'body/tier must be <= 3'));
    const error: any = await core().request({ method: 'GET', path: '/v1/requests' }).catch((e: any) => e);
    assert.ok(error instanceof HeraldApiError);
    assert.deepEqual([error.statusCode, error.code, error.message, error.error], [400, 'VALIDATION_ERROR', 'body/tier must be <= 3', 'Reason']);
    assert.equal(server.seen.length, 1);
    assert.deepEqual(sleeps, []);
  });

  it('does not retry a POST on 503 without an idempotency key', async () => {
    server.reset(errorJson(503, 'SERVICE_UNAVAILABLE', 'down'), json(201, {}));
    const error: any = await core().request({ method: 'POST', path: '/v1/admin/protocols', body: {} }).catch((e: any) => e);
    assert.equal(error.statusCode, 503);
    assert.equal(server.seen.length, 1);
  });

  it('does not turn options.idempotencyKey into a header in core.request: resource methods do', async () => {
    server.reset(errorJson(503, 'SERVICE_UNAVAILABLE', 'down'), json(202, {}));
    const options = { idempotencyKey: 'bcast-7' } as RequestOptions;
    const error: any = await core().request({ method: 'POST', path: '/v1/broadcast', body: {} }, options).catch((e: any) => e);
    assert.equal(error.statusCode, 503);
    assert.equal(server.seen.length, 1);
    assert.equal(server.seen[0].headers['idempotency-key'], undefined);
  });

  it('retries broadcasts.send, schedules.once and schedules.cron given a key, with the same Idempotency-Key header each time', async () => {
    const client = core();
    const calls = [
      () => new Broadcasts(client).send({ subject: 's', body: 'b', category: 'marketing' }, { idempotencyKey: 'k-1' }),
      () => new Schedules(client).once({ wallet: 'w', subject: 's', body: 'b', category: 'system', scheduledFor: '2030-01-01T00:00:00Z' }, { idempotencyKey: 'k-1' }),
      () => new Schedules(client).cron({ wallet: 'w', subject: 's', body: 'b', category: 'system', cronExpr: '0 9 * * *' }, { idempotencyKey: 'k-1' }),
    ];
    // One answer that fits a broadcast's and a schedule's shape.
    const created = { id: 'x', status: 'PENDING', nextRunAt: '2030-01-01T00:00:00.000Z', broadcast_id: 'bcast_x', queued_count: 1, total_subscribers: 1 };
    for (const call of calls) {
      server.reset(errorJson(503, 'SERVICE_UNAVAILABLE', 'down'), json(201, created));
      assert.deepEqual(await call(), created);
      assert.equal(server.seen.length, 2, server.seen[0].url);
      assert.deepEqual(server.seen.map((s) => s.headers['idempotency-key']), ['k-1', 'k-1']);
      assert.equal(JSON.parse(server.seen[0].body).idempotencyKey, undefined, 'the key is a header, not a body field');
    }
  });

  it('refuses a key that cannot be a header value at once, sending nothing (fetch would refuse it as a network failure)', async () => {
    const accepted = { broadcast_id: 'bcast_1', queued_count: 1, total_subscribers: 1, estimated_delivery_s: 1 };
    server.reset(json(202, accepted));
    for (const key of ['', 'ключ', 'a\nb', ' padded', 'k'.repeat(256)]) {
      const error: any = await new Broadcasts(core()).send({ subject: 's', body: 'b', category: 'marketing' }, { idempotencyKey: key }).catch((e: any) => e);
      assert.ok(error instanceof TypeError, JSON.stringify(key));
      assert.match(error.message, /idempotencyKey must be 1 to 255 printable ASCII characters/);
    }
    assert.equal(server.seen.length, 0);
    assert.deepEqual(await new Broadcasts(core()).send({ subject: 's', body: 'b', category: 'marketing' }, { idempotencyKey: 'k'.repeat(255) }), accepted);
    // Every method taking a key rejects (never throws synchronously past a .catch).
    const templates = new Templates(core());
    const webhooks = new Webhooks(core());
    const keyed: (() => Promise<unknown>)[] = [
      () => templates.create({ name: 'n', category: 'defi', subjectTemplate: 's', htmlSource: 'h', textSource: 't' }, { idempotencyKey: 'clé' }),
      () => templates.update('tmpl_1', { name: 'n' }, { idempotencyKey: 'clé' }),
      () => templates.restoreVersion('tmpl_1', 1, { idempotencyKey: 'clé' }),
      () => webhooks.create({ url: 'https://example.com/h', events: ['notification.delivered'] }, { idempotencyKey: 'clé' }),
      () => webhooks.rotateSecret('wh_1', {}, { idempotencyKey: 'clé' }),
    ];
    for (const call of keyed) {
      const answer = call();
      assert.ok(answer instanceof Promise);
      assert.ok((await answer.catch((e: unknown) => e)) instanceof TypeError);
    }
    assert.equal(server.seen.length, 1);
  });

  it('does not retry broadcasts.send, schedules.once or sendBulk without keys', async () => {
    const client = core();
    const calls = [
      () => new Broadcasts(client).send({ subject: 's', body: 'b', category: 'marketing' } as BroadcastParams),
      () => new Schedules(client).once({ sendAt: '2030-01-01T00:00:00Z' } as unknown as OneTimeScheduleParams),
      () => new Notifications(client).sendBulk([{ wallet: 'w', subject: 's', body: 'b', category: 'system' }]),
    ];
    for (const call of calls) {
      server.reset(errorJson(503, 'SERVICE_UNAVAILABLE', 'down'), json(202, {}));
      const error: any = await call().catch((e: any) => e);
      assert.equal(error.statusCode, 503);
      assert.equal(server.seen.length, 1, server.seen[0].url);
      assert.equal(server.seen[0].headers['idempotency-key'], undefined);
    }
  });

  it('retries notifications.send with a key after a 503, with the same body key on every attempt', async () => {
    server.reset(errorJson(502, 'HTTP_502', 'bad gateway'), errorJson(503, 'X', 'down'), json(202, { notificationId: 'n1', status: 'queued' }));
    const message = { wallet: 'w', subject: 's', body: 'b', category: 'system' as const };
    const result = await new Notifications(core()).send(message, { idempotencyKey: 'order-42' });
    assert.deepEqual(result, { notificationId: 'n1', status: 'queued' });
    assert.equal(server.seen.length, 3);
    assert.deepEqual(
      server.seen.map((s) => JSON.parse(s.body).idempotencyKey),
      ['order-42', 'order-42', 'order-42'],
    );
    assert.deepEqual(
      server.seen.map((s) => s.headers['idempotency-key']),
      [undefined, undefined, undefined],
    );
  });

  it('does not retry templates.update after a 503 (each update that arrives adds a version), but does after a 429', async () => {
    server.reset(errorJson(503, 'SERVICE_UNAVAILABLE', 'down'));
    const templates = new Templates(core({ maxRetries: 3 }));
    const error: any = await templates.update('tmpl_1', { subjectTemplate: 'S' }).catch((e: any) => e);
    assert.equal(error.statusCode, 503);
    assert.equal(server.seen.length, 1);
    server.reset(errorJson(429, 'RATE_LIMIT_EXCEEDED', 'slow', { 'retry-after': '0' }), json(200, TEMPLATE));
    assert.equal((await templates.update('tmpl_1', { subjectTemplate: 'S' })).version, 2);
    assert.equal(server.seen.length, 2);
  });

  it('retries templates.create, update and restoreVersion given a key, with the same Idempotency-Key header each time', async () => {
    const templates = new Templates(core({ maxRetries: 3 }));
    const calls: [string, string, () => Promise<unknown>][] = [
      ['POST', '/v1/templates/email', () => templates.create({ name: 'n', category: 'defi', subjectTemplate: 's', htmlSource: 'h', textSource: 't' }, { idempotencyKey: 'k-create' })],
      ['PUT', '/v1/templates/email/tmpl_1', () => templates.update('tmpl_1', { subjectTemplate: 'S' }, { idempotencyKey: 'k-update' })],
      ['POST', '/v1/templates/email/tmpl_1/versions/1/restore', () => templates.restoreVersion('tmpl_1', 1, { idempotencyKey: 'k-restore' })],
    ];
    for (const [method, path, send] of calls) {
      server.reset(errorJson(503, 'SERVICE_UNAVAILABLE', 'down'), json(200, TEMPLATE));
      await send();
      assert.deepEqual(
        server.seen.map((seen) => [seen.method, seen.url]),
        [
          [method, path],
          [method, path],
        ],
      );
      const keys = server.seen.map((seen) => seen.headers['idempotency-key']);
      assert.ok(keys[0] && keys[0] === keys[1], `${path}: ${keys}`);
    }
  });

  it('names a non-JSON error answer by its status', async () => {
    server.reset((res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<h1>Bad gateway</h1>');
    });
    const error: any = await core({ maxRetries: 0 }).request({ method: 'GET', path: '/' }).catch((e: any) => e);
    assert.ok(error instanceof HeraldApiError);
    assert.equal(error.code, 'HTTP_502');
    assert.equal(error.message, '<h1>Bad gateway</h1>');
  });

  it('refuses a 2xx that is not JSON (what answered is not the gateway): no value, no retry', async () => {
    const answers: [string, (res: ServerResponse) => void][] = [
      ['html', (res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>')],
      ['bad json', (res) => res.writeHead(202, { 'content-type': 'application/json' }).end('{bad')],
      ['empty', (res) => res.writeHead(200).end()],
      ['204 to a call that answers JSON', (res) => res.writeHead(204).end()],
    ];
    for (const [name, answer] of answers) {
      server.reset(answer);
      const error: any = await core({ maxRetries: 3 })
        .request({ method: 'POST', path: '/v1/notify', body: { idempotencyKey: 'k' }, retrySafe: true })
        .catch((e: any) => e);
      assert.ok(error instanceof HeraldNetworkError, name);
      assert.equal(error.kind, 'invalid_response', name);
      assert.match(error.message, /^POST http:\/\/127\.0\.0\.1:\d+\/v1\/notify answered 20[024] with .*: is http:\/\/127\.0\.0\.1:\d+ a Herald gateway\?$/, name);
      assert.equal(server.seen.length, 1, `${name}: not retried`);
    }
  });

  it("refuses 2xx JSON that is not the call's answer (what answered is not the gateway): no value, no retry", async () => {
    const client = core({ maxRetries: 3 });
    const cases: [unknown, string, () => Promise<unknown>, string][] = [
      [{}, 'health.check', () => new HealthResource(client).check(), '"status" is missing'],
      [{ status: 'ok', channels: 'smtp' }, 'health.check', () => new HealthResource(client).check(), '"channels" is not an object'],
      [[1, 2], 'health.check', () => new HealthResource(client).check(), 'it is not an object'],
      [{}, 'webhooks.list', () => new Webhooks(client).list(), 'it is not an array of objects'],
      [[1, 2], 'webhooks.list', () => new Webhooks(client).list(), 'it is not an array of objects'],
      [{ data: [1, 2], total: 2 }, 'notifications.list', () => new Notifications(client).list(), '"data" is not an array of objects'],
    ];
    for (const [body, name, call, problem] of cases) {
      server.reset(json(200, body));
      const error: any = await call().catch((e: any) => e);
      assert.ok(error instanceof HeraldNetworkError, `${name}: ${error}`);
      assert.equal(error.kind, 'invalid_response');
      assert.ok(error.message.endsWith(`answered 200 with JSON that is not the gateway's answer (${problem}): is ${server.url} a Herald gateway?`), error.message);
      assert.equal(server.seen.length, 1, `${name}: not retried`);
    }
  });

  it('resolves an empty 204 as undefined on a call that answers no content', async () => {
    server.reset((res) => {
      res.writeHead(204);
      res.end();
    });
    assert.equal(await core().request({ method: 'DELETE', path: '/v1/x', noContent: true }), undefined);
    const error: any = await core({ maxRetries: 0 }).request({ method: 'GET', path: '/v1/protocols/me' }).catch((e: any) => e);
    assert.ok(error instanceof HeraldNetworkError);
    assert.equal(error.kind, 'invalid_response');
    assert.match(error.message, /answered 204 with an empty body: is http:\/\/127\.0\.0\.1:\d+ a Herald gateway\?$/);
  });

  it('turns a timeout into a HeraldNetworkError and retries it on a GET', async () => {
    server.reset(() => {
      // never answers
    });
    const started = Date.now();
    const error: any = await core({ timeoutMs: 150, maxRetries: 1 }).request({ method: 'GET', path: '/slow' }).catch((e: any) => e);
    assert.ok(error instanceof HeraldNetworkError, String(error));
    assert.equal(error.kind, 'timeout');
    assert.match(error.message, /timed out after 150 ms/);
    assert.equal(server.seen.length, 2);
    assert.ok(Date.now() - started < 2000);
  });

  it('does not retry a timed-out POST without an idempotency key', async () => {
    server.reset(() => {});
    const error: any = await core({ timeoutMs: 100 }).request({ method: 'POST', path: '/slow', body: {} }).catch((e: any) => e);
    assert.equal(error.kind, 'timeout');
    assert.equal(server.seen.length, 1);
  });

  it('reports a refused connection and retries it, even for a POST', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error: any = await core({ baseUrl: `http://127.0.0.1:${port}` })
      .request({ method: 'POST', path: '/v1/notify', body: {} })
      .catch((e: any) => e);
    assert.ok(error instanceof HeraldNetworkError);
    assert.equal(error.kind, 'connection_refused');
    assert.match(error.message, /Connection refused by POST http:\/\/127\.0\.0\.1:\d+\/v1\/notify/);
    assert.equal(sleeps.length, 2);
  });

  it('reports a failed DNS look-up as kind dns', async () => {
    // The shape Node's fetch throws for an unknown host; no resolver is asked.
    const failing = async () => {
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.invalid'), { code: 'ENOTFOUND' }) });
    };
    const error: any = await core({ fetch: failing, maxRetries: 0 }).request({ method: 'GET', path: '/health' }).catch((e: any) => e);
    assert.ok(error instanceof HeraldNetworkError);
    assert.equal(error.kind, 'dns');
  });

  it('uses an injected fetch for every attempt', async () => {
    const calls: string[] = [];
    const fake = async (url: string, init: RequestInit) => {
      calls.push(`${init.method} ${url}`);
      return calls.length === 1
        ? new Response('{"statusCode":500,"error":"x","message":"boom","code":"INTERNAL_ERROR"}', { status: 500 })
        : Response.json({ status: 'ok' });
    };
    const result = await core({ fetch: fake, baseUrl: 'https://gw.example/prefix//' }).request({ method: 'GET', path: '/health' });
    assert.deepEqual(result, { status: 'ok' });
    assert.deepEqual(calls, ['GET https://gw.example/prefix/health', 'GET https://gw.example/prefix/health']);
  });

  it('stops at once when the caller aborts, even between retries', async () => {
    server.reset(errorJson(503, 'SERVICE_UNAVAILABLE', 'down'));
    const controller = new AbortController();
    const client = new RequestCore({ baseUrl: server.url, maxRetries: 5 });
    setTimeout(() => controller.abort(new Error('user gave up')), 100);
    const started = Date.now();
    const error: any = await client.request({ method: 'GET', path: '/x' }, { signal: controller.signal }).catch((e: any) => e);
    assert.equal(error.message, 'user gave up');
    assert.equal(server.seen.length, 1);
    assert.ok(Date.now() - started < 1000);
  });

  it('gives up at once on a Retry-After longer than it will wait', async () => {
    server.reset(errorJson(503, 'SERVICE_UNAVAILABLE', 'maintenance', { 'retry-after': '3600' }));
    const error: any = await core().request({ method: 'GET', path: '/x' }).catch((e: any) => e);
    assert.equal(error.retryAfterSeconds, 3600);
    assert.equal(server.seen.length, 1);
    assert.deepEqual(sleeps, []);
  });
});

describe('client options', () => {
  it('refuses at construction what no call could work with', () => {
    for (const baseUrl of ['nope', 'ftp://gw.example', 'localhost:3000', 'http://gw.example?x=1', 'http://gw.example/#top', 'http://gw.example/?', 'http://gw.example/prefix#']) {
      assert.throws(() => new RequestCore({ baseUrl }), TypeError, baseUrl);
    }
    const bad = [{ timeoutMs: 0 }, { timeoutMs: 0.5 }, { timeoutMs: -5 }, { timeoutMs: Number.NaN }, { timeoutMs: 3e9 }, { timeoutMs: '100' }, { timeoutMs: Infinity }, { maxRetries: -1 }, { maxRetries: 1.5 }, { maxRetries: 1e9 }];
    for (const options of bad) {
      assert.throws(() => new RequestCore(options as never), RangeError, JSON.stringify(options));
    }
    assert.equal(new RequestCore({ baseUrl: 'https://gw.example/', maxRetries: 0, timeoutMs: 1 }).baseUrl, 'https://gw.example');
    assert.equal(new RequestCore({ baseUrl: '' }).baseUrl, 'http://localhost:3000', 'an empty string is the default');
  });

  it("holds a call's own timeoutMs and maxRetries to the same rules, sending nothing", async () => {
    let sent = 0;
    const client = new RequestCore({ baseUrl: 'http://gw.example', fetch: async () => (sent++, new Response('{}')) });
    for (const options of [{ timeoutMs: Infinity }, { timeoutMs: 0 }, { timeoutMs: 'abc' }, { maxRetries: -1 }, { maxRetries: 1.5 }]) {
      await assert.rejects(client.request({ method: 'GET', path: '/v1/usage' }, options as never), RangeError, JSON.stringify(options));
    }
    assert.equal(sent, 0);
  });

  it('refuses a . or .. id, which a URL parser would resolve to another route, sending nothing', async () => {
    let sent = 0;
    const client = new RequestCore({ baseUrl: 'http://gw.example', fetch: async () => (sent++, new Response('{}')) });
    for (const id of ['.', '..', '%2E%2e', '.%2E']) {
      await assert.rejects(client.request({ method: 'GET', path: `/v1/notifications/${id}` }), TypeError, id);
    }
    assert.equal(sent, 0);
    await client.request({ method: 'GET', path: '/v1/notifications/a..b' });
    assert.equal(sent, 1);
  });

  it('refuses an API key or User-Agent that cannot be a header value at construction, and trims a key read from a file', async () => {
    for (const token of ['hrld_live_ab€c', 'hrld_live_a\nb', 'hrld_live_a\0b']) {
      assert.throws(() => new RequestCore({ token }), /the API key \(or admin token\) cannot be sent in a header/, JSON.stringify(token));
    }
    assert.throws(() => new RequestCore({ userAgent: 'a\r\nX-Evil: 1' }), /userAgent cannot be sent in a header/);
    assert.throws(() => new RequestCore({ userAgent: 'agent/€' }), /userAgent cannot be sent in a header/);
    let sent: Headers | undefined;
    const core = new RequestCore({
      baseUrl: 'http://gw.example',
      token: 'hrld_live_abc\n',
      userAgent: 'my-app/1.0 (café)',
      fetch: async (_url, init) => ((sent = new Headers(init?.headers)), new Response('{}')),
    });
    await core.request({ method: 'GET', path: '/v1/usage' });
    assert.equal(sent!.get('authorization'), 'Bearer hrld_live_abc');
    assert.ok(new RequestCore({ token: null as never }), 'null is no key, as undefined is');
  });

  it('needs an admin token for the admin client', () => {
    assert.throws(() => new HeraldAdmin({} as never), TypeError);
    assert.throws(() => new HeraldAdmin({ adminToken: '' }), TypeError);
    assert.ok(new HeraldAdmin({ adminToken: 'hrld_admin_x' }).protocols);
  });
});

describe('SDK_VERSION', () => {
  it('matches package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    assert.equal(SDK_VERSION, pkg.version);
  });
});
