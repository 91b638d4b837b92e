import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openPglite, openPostgres, type Database } from '../../packages/server/src/db/connection.js';
import { loadConfig } from '../../packages/server/src/config.js';
import { startHerald, type Herald } from '../../packages/server/src/runtime.js';
import { ADMIN_TOKEN, ENCRYPTION_KEY, call, createProtocol, freshSchema, onPostgres, sleep, testEnv, waitFor } from '../support/gateway.js';
import { ensureBuilt, killStrays, spawnServer } from './server-process.js';

/** POSTs JSON whose second half is sent `pauseMs` after `midway()` is called: a request surely in flight. */
function slowPost(url: string, pathname: string, body: unknown, midway: () => void, pauseMs: number) {
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise<{ status: number; body: any; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
    const req = http.request(`${url}${pathname}`, {
      method: 'POST',
      agent: false,
      // Asking to keep the connection (agent: false alone would ask to close it), so a
      // `Connection: close` in the answer is the server's own.
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json', 'content-length': payload.length, connection: 'keep-alive' },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text), headers: res.headers }));
      res.on('error', reject);
    });
    req.write(payload.subarray(0, 10));
    // Give the server time to read the headers before it is told to stop.
    setTimeout(() => {
      midway();
      setTimeout(() => req.end(payload.subarray(10)), pauseMs);
    }, 100);
  });
}

/**
 * A keyed POST whose headers and first bytes are sent at once (resolved once they are written) and
 * the rest on `finish()`: a request the server has accepted and is still reading.
 */
async function startPost(url: string, pathname: string, apiKey: string, body: unknown) {
  const payload = Buffer.from(JSON.stringify(body));
  let answer!: Promise<{ status: number; body: any }>;
  const req = http.request(`${url}${pathname}`, {
    method: 'POST',
    agent: false,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'content-length': payload.length },
  });
  answer = new Promise((resolve, reject) => {
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      res.on('error', reject);
    });
  });
  await new Promise<void>((resolve) => req.write(payload.subarray(0, 10), () => resolve()));
  return { answer, finish: () => req.end(payload.subarray(10)) };
}

describe('graceful shutdown', () => {
  let dir: string | undefined;
  let schema: { url: string; drop: () => Promise<void> } | undefined;

  before(async () => {
    ensureBuilt();
    if (onPostgres) schema = await freshSchema();
    else dir = mkdtempSync(path.join(os.tmpdir(), 'herald-shutdown-'));
  });
  after(async () => {
    await killStrays();
    await schema?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('finishes every accepted request, writes the whole request log and exits 0 on SIGTERM', async () => {
    const server = spawnServer({
      ...(schema ? { DATABASE_URL: schema.url, HERALD_ENCRYPTION_KEY: ENCRYPTION_KEY } : { HERALD_DATA_DIR: dir! }),
      HERALD_ADMIN_TOKEN: ADMIN_TOKEN,
      HERALD_IP_RATE_LIMIT: '10000',
      // Only the shutdown flush can have written the log.
      HERALD_REQUEST_LOG_FLUSH_MS: '60000',
    });
    const url = await server.listening();
    const p = await createProtocol(url, { tier: 3 });
    // Twenty open keep-alive connections, so the burst below reaches the server on sockets it has accepted.
    const warm = await Promise.all(Array.from({ length: 20 }, () => call(url, p.apiKey, 'GET', '/v1/usage')));
    assert.ok(warm.every((r) => r.status === 200));

    // Twenty keyed requests whose bodies are half sent before the signal: surely in flight, however
    // loaded the machine (a burst sent just before the signal could reach the server after it).
    const preview = { wallet: '11111111111111111111111111111112', subject: 'In flight', body: 'while stopping', category: 'system' };
    const burst = await Promise.all(Array.from({ length: 20 }, () => startPost(url, '/v1/preview', p.apiKey, preview)));
    let signalledAt = 0;
    const slow = slowPost(
      url,
      '/v1/admin/protocols',
      { name: 'Created while stopping', tier: 1 },
      () => {
        signalledAt = Date.now();
        server.child.kill('SIGTERM');
        for (const request of burst) setTimeout(request.finish, 100);
      },
      300,
    );
    const created = await slow;
    const answers = await Promise.all(burst.map((request) => request.answer));
    const exit = await server.exited;

    assert.deepEqual(exit, { code: 0, signal: null }, server.stderr());
    assert.ok(server.stdout().includes('shutdown complete'));
    assert.ok(signalledAt > 0);
    // The request whose body was still arriving at SIGTERM was answered in full.
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.name, 'Created while stopping');
    assert.match(created.body.apiKey, /^hrld_live_/);
    assert.equal(created.headers.connection, 'close', 'its connection is not kept for another request');
    // So was every keyed request in flight: the real answer, never a truncated or bodiless one.
    for (const answer of answers) {
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(typeof answer.body.renderedHtml, 'string');
    }
    const answered = answers.length;

    const db: Database = schema ? await openPostgres({ url: schema.url, max: 1 }) : await openPglite(path.join(dir!, 'pgdata'));
    try {
      const [{ n }] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM request_log WHERE protocol_short_id = (SELECT short_id FROM protocols WHERE id = $1)', [p.id]);
      assert.equal(n, warm.length + answered, 'every answered request is in the log');
      const [{ created: stored }] = await db.query<{ created: number }>("SELECT count(*)::int AS created FROM protocols WHERE name = 'Created while stopping'");
      assert.equal(stored, 1);
    } finally {
      await db.close();
    }
  });
});

describe('closing with requests whose clients went away', () => {
  let schema: { url: string; drop: () => Promise<void> } | undefined;
  before(async () => {
    if (onPostgres) schema = await freshSchema();
  });
  after(async () => {
    await schema?.drop();
  });

  /** Sends the request head and `bodyStart`, then drops the connection once `ready` resolves. */
  function abandon(url: string, pathname: string, headers: Record<string, string | number>, bodyStart: string, ready: Promise<unknown>) {
    const req = http.request(`${url}${pathname}`, { method: bodyStart ? 'POST' : 'GET', agent: false, headers });
    req.on('error', () => {});
    if (bodyStart) req.write(bodyStart);
    else req.end();
    void ready.then(() => req.destroy());
  }

  it('keeps storage open until the handlers of abandoned requests have finished', async () => {
    let herald: Herald | undefined;
    let entered!: () => void;
    const handlerEntered = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let outcome: string | undefined;
    let socket: import('node:net').Socket | undefined;
    herald = await startHerald(loadConfig(testEnv(schema ? { DATABASE_URL: schema.url } : {})), {
      announce: () => {},
      routes: (app) =>
        app.get('/v1/test/slow', async (request) => {
          socket = request.raw.socket;
          entered();
          await gate;
          try {
            const [{ one }] = await herald!.deps.db.query<{ one: number }>('SELECT 1 AS one');
            outcome = `read ${one}`;
          } catch (error) {
            outcome = `failed: ${(error as Error).message}`;
          }
          return { ok: true };
        }),
    });
    const protocol = await createProtocol(herald.url!, { tier: 3 });
    abandon(herald.url!, '/v1/test/slow', { authorization: `Bearer ${protocol.apiKey}` }, '', handlerEntered);
    await handlerEntered;
    await waitFor(async () => socket!.destroyed);
    assert.equal(herald.app!.inFlight.size, 1, 'the handler is still running without a client');

    const closing = herald.close();
    let closed = false;
    void closing.then(() => (closed = true));
    await sleep(100);
    assert.equal(closed, false, 'closing waits for the running handler');
    release();
    await closing;
    assert.equal(outcome, 'read 1', 'the handler used storage before it closed');
  });

  it('does not wait for a request abandoned before its body arrived', async () => {
    const herald = await startHerald(loadConfig(testEnv(schema ? { DATABASE_URL: schema.url } : {})), { announce: () => {} });
    const protocol = await createProtocol(herald.url!, { tier: 3 });
    const headers = { authorization: `Bearer ${protocol.apiKey}`, 'content-type': 'application/json', 'content-length': 500 };
    abandon(herald.url!, '/v1/notify', headers, '{"wallet":', sleep(100));
    // The guard counted it; the broken body answers it (to nobody) and takes it out again.
    await waitFor(async () => herald.app!.inFlight.size === 0);
    const started = Date.now();
    await herald.close();
    assert.ok(Date.now() - started < 5_000, `closed in ${Date.now() - started} ms`);
  });
});
