import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { loadConfig } from '../../packages/server/src/config.js';
import { startHerald, type Herald } from '../../packages/server/src/runtime.js';
import { call, createProtocol, freshSchema, isErrorBody, onPostgres, startGateway, testEnv, type TestGateway } from '../support/gateway.js';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

function assertRateHeaders(res: Awaited<ReturnType<typeof call>>) {
  for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
    assert.match(res.headers.get(name) ?? '', /^\d+$/, `${name} on a ${res.status}`);
  }
}

/** `call` that gives up after `ms`: an unreachable database must produce an answer, not a hang. */
async function callWithin(ms: number, ...args: Parameters<typeof call>) {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms: ${args[2]} ${args[3]}`)), ms);
  });
  return Promise.race([call(...args), timeout]).finally(() => clearTimeout(timer));
}

function assertUnavailable(res: Awaited<ReturnType<typeof call>>) {
  assert.equal(res.status, 503);
  assertRateHeaders(res);
  assert.equal(res.headers.get('retry-after'), '5');
  const { status, timestamp, ...error } = res.body;
  assert.ok(isErrorBody(error), JSON.stringify(res.body));
  assert.equal(error.code, 'SERVICE_UNAVAILABLE');
  assert.equal(error.error, 'Service Unavailable');
  assert.equal(status, 'unavailable');
  assert.match(timestamp, ISO);
}

describe('health', () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startGateway();
  });
  after(() => gw.close());

  it('answers 200 with status, time, engine, role and channel providers, without a key', async () => {
    const res = await call(gw.url, undefined, 'GET', '/health');
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['channels', 'database', 'role', 'status', 'timestamp']);
    assert.equal(res.body.status, 'ok');
    assert.match(res.body.timestamp, ISO);
    assert.ok(Math.abs(Date.parse(res.body.timestamp) - Date.now()) < 5000);
    assert.equal(res.body.database, onPostgres ? 'postgres' : 'pglite');
    assert.equal(res.body.role, 'all');
    assert.deepEqual(res.body.channels, { email: 'capture', telegram: 'capture', sms: 'capture' });
  });

  it('ignores whatever key is sent', async () => {
    const res = await call(gw.url, 'hrld_live_0123456789012345678901234567890123456789', 'GET', '/health');
    assert.equal(res.status, 200);
  });
});

describe('health of a worker process (HERALD_HEALTH_PORT)', () => {
  it('answers GET /health alone on that port, and nothing listens without it', async () => {
    const worker = await startGateway({ env: { HERALD_ROLE: 'worker', HERALD_HEALTH_PORT: '0' } });
    try {
      const res = await call(worker.url, undefined, 'GET', '/health');
      assert.equal(res.status, 200);
      assert.equal(res.body.status, 'ok');
      assert.equal(res.body.role, 'worker');
      assert.equal(res.body.database, onPostgres ? 'postgres' : 'pglite');
      assertRateHeaders(res);
      // The API is not served here: the one error shape, as for any unknown route.
      for (const [method, path] of [['POST', '/v1/notify'], ['GET', '/v1/usage'], ['GET', '/openapi.json'], ['POST', '/mcp']] as const) {
        const other = await call(worker.url, 'hrld_live_0123456789012345678901234567890123456789', method, path, method === 'POST' ? {} : undefined);
        assert.equal(other.status, 404, `${method} ${path}`);
        assert.ok(isErrorBody(other.body), JSON.stringify(other.body));
      }
    } finally {
      await worker.close();
    }
    // In the other roles /health is on PORT: the variable is ignored, with a warning.
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
    const api = await startGateway({ env: { HERALD_ROLE: 'api', HERALD_HEALTH_PORT: '0' }, logger });
    try {
      assert.equal((await call(api.url, undefined, 'GET', '/health')).body.role, 'api');
      assert.ok(lines.some((line) => /HERALD_HEALTH_PORT is for the worker role only/.test(line)), lines.join(''));
    } finally {
      await api.close();
    }
    const quiet = await startGateway({ env: { HERALD_ROLE: 'worker' } });
    try {
      assert.equal(quiet.herald.url, undefined, 'no port without HERALD_HEALTH_PORT');
    } finally {
      await quiet.close();
    }
  });
});

describe('health with the embedded database closed', { skip: onPostgres && 'PGlite only: on PostgreSQL the connection is cut instead' }, () => {
  it('answers 503 with the error body, status and timestamp', async () => {
    const gw = await startGateway();
    try {
      assert.equal((await call(gw.url, undefined, 'GET', '/health')).status, 200);
      await gw.herald.deps.db.close();
      assertUnavailable(await callWithin(5000, gw.url, undefined, 'GET', '/health'));
    } finally {
      // The database is already closed, so closing it again inside close() fails: that is expected.
      await gw.close().catch(() => {});
    }
  });
});

/** A TCP relay to PostgreSQL that the test can cut and restore, on a fixed port. */
class Relay {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  async start(): Promise<void> {
    if (this.server) return;
    const server = net.createServer((client) => {
      const upstream = net.connect(5432, '127.0.0.1');
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise((resolve) => server.close(resolve));
  }
}

describe('health with PostgreSQL unreachable', { skip: !onPostgres && 'PostgreSQL only: needs a network connection to cut' }, () => {
  const relay = new Relay();
  let herald: Herald;
  let drop: () => Promise<void>;

  before(async () => {
    const schema = await freshSchema();
    drop = schema.drop;
    await relay.start();
    const url = new URL(schema.url);
    url.port = String(relay.port);
    herald = await startHerald(loadConfig(testEnv({ DATABASE_URL: url.toString() })), { announce: () => {} });
  });
  after(async () => {
    await relay.start();
    await herald.close();
    await relay.stop();
    await drop();
  });

  it('answers 503 while the database is away and 200 again once it is back, without a restart', async () => {
    const url = herald.url!;
    const p = await createProtocol(url, { tier: 3 });
    // The key is now in the auth cache, so the failure comes from the route's own query.
    assert.equal((await call(url, p.apiKey, 'GET', '/v1/usage')).status, 200);
    assert.equal((await call(url, undefined, 'GET', '/health')).status, 200);

    await relay.stop();
    assertUnavailable(await callWithin(8000, url, undefined, 'GET', '/health'));
    const usage = await callWithin(8000, url, p.apiKey, 'GET', '/v1/usage');
    assert.equal(usage.status, 503);
    assert.ok(isErrorBody(usage.body), JSON.stringify(usage.body));
    assert.equal(usage.body.code, 'SERVICE_UNAVAILABLE');
    assert.ok(usage.headers.get('retry-after'));
    assertRateHeaders(usage);
    assert.ok(!/ECONNREFUSED|5432|127\.0\.0\.1/.test(usage.body.message), usage.body.message);
    // A key the cache has never seen cannot be checked either: 503, not 401.
    const unseen = await callWithin(8000, url, 'hrld_live_0123456789012345678901234567890123456789', 'GET', '/v1/usage');
    assert.equal(unseen.status, 503);
    assert.equal(unseen.body.code, 'SERVICE_UNAVAILABLE');
    assertRateHeaders(unseen);

    await relay.start();
    const health = await callWithin(8000, url, undefined, 'GET', '/health');
    assert.equal(health.status, 200, JSON.stringify(health.body));
    assert.equal(health.body.status, 'ok');
    assert.equal((await callWithin(8000, url, p.apiKey, 'GET', '/v1/usage')).status, 200);
  });
});
