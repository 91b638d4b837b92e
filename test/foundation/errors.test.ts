import assert from 'node:assert/strict';
import net from 'node:net';
import pino from 'pino';
import { after, before, describe, it } from 'node:test';
import { ADMIN_TOKEN, call, isErrorBody, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { logLines } from '../support/log-lines.js';

describe('error model', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  const log = logLines();

  before(async () => {
    gw = await startGateway({ logger: pino({ level: 'info' }, log.stream), env: { HERALD_BODY_LIMIT: '65536', HERALD_IP_RATE_LIMIT: '1000' } });
    acme = await gw.createProtocol({ tier: 3 });
  });
  after(() => gw.close());

  it('answers unknown routes with 404 NOT_FOUND', async () => {
    for (const [method, path] of [
      ['GET', '/v1/nothing-here'],
      ['POST', '/v1/nothing-here'],
      ['GET', '/nope'],
    ]) {
      const res = await call(gw.url, acme.apiKey, method, path, method === 'POST' ? {} : undefined);
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.ok(isErrorBody(res.body));
      assert.equal(res.body.code, 'NOT_FOUND');
      assert.equal(res.body.error, 'Not Found');
      assert.ok(res.headers.get('x-ratelimit-limit'));
    }
  });

  it('answers a path whose id is left empty as an unknown path: 404 NOT_FOUND with any method and any key, counted per IP, not logged', async () => {
    const unknown = (method: string, path: string) => ({ statusCode: 404, error: 'Not Found', message: `Route ${method} ${path} not found`, code: 'NOT_FOUND' });
    const paths = [
      ['GET', '/v1/notifications/'],
      ['DELETE', '/v1/schedule/'],
      ['GET', '/v1/subscriptions/'],
      ['GET', '/v1/templates/'],
      ['GET', '/v1/broadcasts/'],
      ['GET', '/v1/wallets//status'],
      ['GET', '/v1/webhooks//deliveries'],
      ['PUT', '/v1/webhooks/'],
      ['POST', '/v1/schedule/'],
      ['PATCH', '/v1/admin/protocols/'],
    ] as const;
    for (const [method, path] of paths) {
      for (const key of [acme.apiKey, undefined, 'hrld_live_unknown']) {
        const res = await call(gw.url, key, method, path);
        assert.equal(res.status, 404, `${method} ${path} ${key}: ${JSON.stringify(res.body)}`);
        assert.deepEqual(res.body, unknown(method, path));
        assert.equal(res.headers.get('allow'), null, 'not a 405: no method serves the path');
        assert.equal(res.headers.get('x-ratelimit-limit'), '1000', 'the per-IP limit');
      }
    }
    // The body is not read, as for any unknown path.
    const malformed = await fetch(`${gw.url}/v1/webhooks/`, { method: 'PATCH', headers: { authorization: `Bearer ${acme.apiKey}`, 'content-type': 'text/plain' }, body: '{bad' });
    assert.equal(malformed.status, 404);
    assert.equal(((await malformed.json()) as { code: string }).code, 'NOT_FOUND');
    const log = await call(gw.url, acme.apiKey, 'GET', '/v1/requests?limit=100');
    assert.equal(log.status, 200);
    const logged = (log.body.items as { endpoint: string }[]).filter((entry) => paths.some(([, path]) => entry.endpoint === path) || entry.endpoint === '/v1/webhooks/');
    assert.deepEqual(logged, [], 'unknown paths are in no protocol log');
    // An engagement link with an empty token keeps its own answer: the pixel is still an image.
    const pixel = await fetch(`${gw.url}/track/open/`);
    assert.equal(pixel.status, 200);
    assert.equal(pixel.headers.get('content-type'), 'image/gif');
  });

  it('answers a route that exists with other methods with 405 METHOD_NOT_ALLOWED and Allow', async () => {
    for (const [method, path, allow] of [
      ['POST', '/v1/protocols/me', 'GET, HEAD'],
      ['PUT', '/v1/schedule', 'GET, HEAD, POST'],
      ['DELETE', '/v1/notify', 'POST'],
      ['PATCH', '/v1/templates/email/tmpl_x', 'GET, HEAD, PUT, DELETE'],
    ]) {
      const res = await call(gw.url, acme.apiKey, method, path, method === 'DELETE' ? undefined : {});
      assert.equal(res.status, 405, `${method} ${path}`);
      assert.ok(isErrorBody(res.body));
      assert.equal(res.body.code, 'METHOD_NOT_ALLOWED');
      assert.equal(res.body.error, 'Method Not Allowed');
      assert.equal(res.headers.get('allow'), allow, `${method} ${path}`);
      assert.ok(res.headers.get('x-ratelimit-limit'));
      assert.ok(res.headers.get('x-request-id'));
      assert.equal(res.headers.get('access-control-allow-origin'), null, 'routes that need a key are not open to web pages');
    }
  });

  it('answers 405 on the routes open to any web page with their CORS headers, so a page can read it', async () => {
    for (const [method, path, allow] of [
      // (`DELETE /v1/identities/:wallet` matches these paths too.)
      ['GET', '/v1/identities/challenge', 'POST, DELETE, OPTIONS'],
      ['PUT', '/v1/identities', 'POST, OPTIONS'],
      ['GET', '/v1/identities/verify', 'POST, DELETE, OPTIONS'],
      ['POST', '/v1/identities/5Hr8Rz5LsJjD1ZLCVXrpn4iMfPbuXzUfGSd9ptbZ5Fz1', 'DELETE, OPTIONS'],
    ]) {
      const res = await call(gw.url, undefined, method, path, method === 'PUT' ? {} : undefined);
      assert.equal(res.status, 405, `${method} ${path}`);
      assert.equal(res.body.code, 'METHOD_NOT_ALLOWED');
      assert.equal(res.headers.get('allow'), allow, `${method} ${path}`);
      assert.equal(res.headers.get('access-control-allow-origin'), '*', `${method} ${path}`);
      assert.match(res.headers.get('access-control-expose-headers') ?? '', /X-RateLimit-Remaining/);
    }
  });

  it('answers a path with a segment over the router limit with 414, whatever the method', async () => {
    for (const method of ['GET', 'PUT', 'DELETE', 'POST']) {
      const res = await call(gw.url, acme.apiKey, method, `/v1/notifications/${'a'.repeat(5000)}`, method === 'PUT' || method === 'POST' ? {} : undefined);
      assert.equal(res.status, 414, method);
      assert.deepEqual(res.body, { statusCode: 414, error: 'URI Too Long', message: 'A path parameter of the URL is too long', code: 'URI_TOO_LONG' });
      assert.equal(res.headers.get('allow'), null);
      assert.ok(res.headers.get('x-request-id'));
    }
    const unknown = await call(gw.url, acme.apiKey, 'POST', `/track/click/${'a'.repeat(5000)}`, {});
    assert.equal(unknown.status, 414);
  });

  it('answers an unknown id of any length with its resource’s 404, as any other unknown id', async () => {
    const long = 'A'.repeat(150);
    for (const [method, path, code] of [
      ['GET', `/v1/notifications/${long}`, 'NOTIFICATION_NOT_FOUND'],
      ['GET', `/v1/notifications/${long}/receipt`, 'NOTIFICATION_NOT_FOUND'],
      ['DELETE', `/v1/schedule/${long}`, 'SCHEDULE_NOT_FOUND'],
      ['GET', `/v1/webhooks/${long}/deliveries`, 'WEBHOOK_NOT_FOUND'],
      ['GET', `/v1/templates/email/${long}`, 'TEMPLATE_NOT_FOUND'],
    ]) {
      const res = await call(gw.url, acme.apiKey, method, path);
      assert.deepEqual([res.status, res.body.code], [404, code], path);
    }
    const admin = await call(gw.url, ADMIN_TOKEN, 'PATCH', `/v1/admin/protocols/${long}`, { tier: 1 });
    assert.deepEqual([admin.status, admin.body.code], [404, 'PROTOCOL_NOT_FOUND']);
  });

  it('answers malformed JSON with 400 VALIDATION_ERROR', async () => {
    const res = await call(gw.url, ADMIN_TOKEN, 'POST', '/v1/admin/protocols', '{"name": "x",');
    assert.equal(res.status, 400);
    assert.ok(isErrorBody(res.body));
    assert.equal(res.body.code, 'VALIDATION_ERROR');
    assert.match(res.body.message, /JSON/);
    const bom = await call(gw.url, ADMIN_TOKEN, 'POST', '/v1/admin/protocols', '\ufeff{"name": "x", "tier": 1}');
    assert.equal(bom.status, 400);
    assert.deepEqual(bom.body, {
      statusCode: 400,
      error: 'Bad Request',
      message: 'Malformed JSON body: it starts with a byte-order mark (U+FEFF); send the JSON without one',
      code: 'VALIDATION_ERROR',
    });
  });

  it('answers an unknown path 404 and a known path with another method 405 whatever the body holds', async () => {
    const unknown = await call(gw.url, acme.apiKey, 'POST', '/v2/notify', '{bad');
    assert.deepEqual([unknown.status, unknown.body.code], [404, 'NOT_FOUND']);
    const wrongMethod = await call(gw.url, acme.apiKey, 'POST', '/v1/protocols/me', '{bad');
    assert.deepEqual([wrongMethod.status, wrongMethod.body.code], [405, 'METHOD_NOT_ALLOWED']);
    assert.equal(wrongMethod.headers.get('allow'), 'GET, HEAD');
  });

  it('answers an unknown path 404 and a known path with another method 405 however large the body, without reading it', async () => {
    const large = JSON.stringify({ name: 'x'.repeat(70_000) });
    const unknown = await call(gw.url, acme.apiKey, 'POST', '/v1/nope', large);
    assert.deepEqual([unknown.status, unknown.body.code], [404, 'NOT_FOUND']);
    const wrongMethod = await call(gw.url, acme.apiKey, 'PUT', '/v1/notify', large);
    assert.deepEqual([wrongMethod.status, wrongMethod.body.code], [405, 'METHOD_NOT_ALLOWED']);
    assert.equal(wrongMethod.headers.get('allow'), 'POST');
  });

  it('answers an oversize body with 413', async () => {
    const res = await call(gw.url, ADMIN_TOKEN, 'POST', '/v1/admin/protocols', { name: 'x'.repeat(70_000), tier: 1 });
    assert.equal(res.status, 413);
    assert.ok(isErrorBody(res.body));
    assert.equal(res.body.code, 'PAYLOAD_TOO_LARGE');
  });

  it('answers an unsupported content type with 415', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const res = await call(gw.url, ADMIN_TOKEN, 'POST', '/v1/admin/protocols', 'name=x', { 'content-type': type });
      assert.equal(res.status, 415, type);
      assert.ok(isErrorBody(res.body));
      assert.equal(res.body.code, 'UNSUPPORTED_MEDIA_TYPE');
    }
  });

  it('answers a compressed body with 415 rather than reading it as JSON', async () => {
    const res = await call(gw.url, acme.apiKey, 'POST', '/v1/notify', {}, { 'content-encoding': 'gzip' });
    assert.equal(res.status, 415);
    assert.ok(isErrorBody(res.body));
    assert.equal(res.body.code, 'UNSUPPORTED_MEDIA_TYPE');
    assert.match(res.body.message, /Content-Encoding "gzip"/);
    assert.ok(res.headers.get('x-ratelimit-limit'));
    // identity is no encoding: the body is read, and here found incomplete
    const plain = await call(gw.url, acme.apiKey, 'POST', '/v1/notify', {}, { 'content-encoding': 'identity' });
    assert.equal(plain.status, 400);
    assert.equal(plain.body.code, 'VALIDATION_ERROR');
  });

  it('answers a body declared in a charset other than UTF-8, or sent with a transfer coding, with 415', async () => {
    for (const charset of ['latin1', 'UTF-16', '"iso-8859-1"']) {
      const res = await call(gw.url, acme.apiKey, 'POST', '/v1/notify', {}, { 'content-type': `application/json; charset=${charset}` });
      assert.equal(res.status, 415, charset);
      assert.equal(res.body.code, 'UNSUPPORTED_MEDIA_TYPE');
      assert.equal(res.body.message, `Charset "${charset.replace(/"/g, '')}" is not supported; send the JSON body in UTF-8`);
    }
    for (const charset of ['utf-8', 'UTF8', '"UTF-8"']) {
      const res = await call(gw.url, ADMIN_TOKEN, 'POST', '/v1/admin/protocols', { name: 'Charset', tier: 0 }, { 'content-type': `application/json;charset=${charset}` });
      assert.equal(res.status, 201, charset);
    }
    const raw = await exchange(
      'POST /v1/notify HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n' +
        `Authorization: Bearer ${acme.apiKey}\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
    );
    assert.equal(raw.status, 415);
    assert.equal(raw.body.code, 'UNSUPPORTED_MEDIA_TYPE');
    assert.match(raw.body.message, /^Transfer-Encoding "gzip, chunked" is not supported/);
  });

  /** One request written as raw bytes, and its answer's status, head and parsed body. */
  async function exchange(text: string): Promise<{ status: number; head: string; body: any; closed: boolean }> {
    const { port } = new URL(gw.url);
    const raw = await new Promise<string>((resolve, reject) => {
      let received = '';
      const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(text));
      socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
      socket.on('end', () => resolve(received));
      socket.on('error', reject);
    });
    const [head, ...rest] = raw.split('\r\n\r\n');
    const payload = rest.join('\r\n\r\n');
    const json = payload.includes('{') ? payload.slice(payload.indexOf('{'), payload.lastIndexOf('}') + 1) : '';
    return { status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1]), head, body: json ? JSON.parse(json) : null, closed: true };
  }

  it('refuses repeated or invalid Host lines, and repeated Authorization lines, with 400', async () => {
    const cases: [string, RegExp][] = [
      ['Host: a.example\r\nHost: b.example\r\n', /^A request must carry one Host header, not several$/],
      ['Host: \r\n', /^The Host header must name a host/],
      ['Host: a b\r\n', /^The Host header must name a host/],
      ['Host: user@a.example\r\n', /^The Host header must name a host/],
      [`Host: localhost\r\nAuthorization: Bearer ${'hrld_live_x'}\r\n`, /^A request must carry one Authorization header, not several$/],
    ];
    for (const [headers, message] of cases) {
      const res = await exchange(`GET /v1/usage HTTP/1.1\r\n${headers}Authorization: Bearer ${acme.apiKey}\r\nConnection: close\r\n\r\n`);
      assert.equal(res.status, 400, headers);
      assert.ok(isErrorBody(res.body), headers);
      assert.equal(res.body.code, 'VALIDATION_ERROR');
      assert.match(res.body.message, message, headers);
      assert.match(res.head, /\r\nx-request-id: /i);
      assert.match(res.head, /\r\nx-ratelimit-limit: \d+/i);
    }
    for (const host of ['localhost', 'localhost:8080', '127.0.0.1:1', '[::1]:443', 'xn--bcher-kva.example']) {
      const res = await exchange(`GET /v1/usage HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${acme.apiKey}\r\nConnection: close\r\n\r\n`);
      assert.equal(res.status, 200, host);
    }
    // HTTP/1.0 needs no Host, but two credentials are refused there too.
    const old = await exchange(`GET /v1/usage HTTP/1.0\r\nAuthorization: Bearer ${acme.apiKey}\r\nAuthorization: Bearer hrld_live_other\r\n\r\n`);
    assert.equal(old.status, 400);
    assert.equal(old.body.message, 'A request must carry one Authorization header, not several');
    // A route that needs no key does not look at Authorization lines.
    const health = await exchange('GET /health HTTP/1.1\r\nHost: localhost\r\nAuthorization: a\r\nAuthorization: b\r\nConnection: close\r\n\r\n');
    assert.equal(health.status, 200);
  });

  it('serves a request with an Expect other than 100-continue as if it had none', async () => {
    const res = await exchange(`GET /v1/usage HTTP/1.1\r\nHost: localhost\r\nExpect: foo\r\nAuthorization: Bearer ${acme.apiKey}\r\nConnection: close\r\n\r\n`);
    assert.equal(res.status, 200);
    assert.match(res.head, /\r\nx-request-id: /i);
    assert.equal(typeof res.body.usage, 'number');
  });

  it('closes a CONNECT connection after its answer even while the client keeps sending, and survives one pipelined behind a request', async () => {
    const { port } = new URL(gw.url);
    const closed = await new Promise<{ answer: string; closedAfterMs: number }>((resolve, reject) => {
      let answer = '';
      let answeredAt = 0;
      const socket = net.connect(Number(port), '127.0.0.1', () => socket.write('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'));
      const chatter = setInterval(() => socket.writable && socket.write('x'.repeat(100)), 50);
      const safety = setTimeout(() => {
        clearInterval(chatter);
        socket.destroy();
        reject(new Error(`the gateway kept the socket open: ${answer}`));
      }, 15_000);
      socket.setEncoding('utf8').on('data', (chunk: string) => {
        answer += chunk;
        answeredAt ||= Date.now();
      });
      socket.on('error', () => {});
      socket.on('close', () => {
        clearInterval(chatter);
        clearTimeout(safety);
        resolve({ answer, closedAfterMs: Date.now() - answeredAt });
      });
    });
    assert.match(closed.answer, /^HTTP\/1\.1 404 /);
    // A CONNECT behind a request not yet answered, in one write: the gateway drops that connection
    // and goes on serving.
    await new Promise<void>((resolve) => {
      const socket = net.connect(Number(port), '127.0.0.1', () =>
        socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\nCONNECT example.com:1 HTTP/1.1\r\nHost: example.com:1\r\n\r\n'),
      );
      socket.resume();
      socket.on('error', () => {});
      socket.on('close', () => resolve());
    });
    assert.equal((await call(gw.url, undefined, 'GET', '/health')).status, 200);
  });

  it('answers CONNECT like any other method: 405 on a known path, 404 elsewhere, and closes the connection', async () => {
    const known = await exchange(`CONNECT /v1/notify HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${acme.apiKey}\r\n\r\n`);
    assert.equal(known.status, 405);
    assert.equal(known.body.code, 'METHOD_NOT_ALLOWED');
    assert.match(known.head, /\r\nallow: POST\r\n/i);
    assert.match(known.head, /\r\nx-request-id: /i);
    const tunnel = await exchange('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    assert.equal(tunnel.status, 404);
    assert.deepEqual(tunnel.body, { statusCode: 404, error: 'Not Found', message: 'Route CONNECT example.com:443 not found', code: 'NOT_FOUND' });
    assert.match(tunnel.head, /\r\nx-ratelimit-limit: \d+/i);
  });

  it('answers an HTTP/1.1 request without Host in the one error shape, with every header', async () => {
    const { port } = new URL(gw.url);
    const raw = await new Promise<string>((resolve, reject) => {
      let text = '';
      const socket = net.connect(Number(port), '127.0.0.1', () => {
        socket.write(`GET /v1/usage HTTP/1.1\r\nAuthorization: Bearer ${acme.apiKey}\r\nConnection: close\r\n\r\n`);
      });
      socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    const [head, body] = raw.split('\r\n\r\n');
    assert.match(head, /^HTTP\/1\.1 400 /);
    assert.match(head, /\r\nx-request-id: /i);
    assert.match(head, /\r\nx-ratelimit-limit: \d+/i);
    const parsed = JSON.parse(body.includes('{') ? body.slice(body.indexOf('{'), body.lastIndexOf('}') + 1) : body);
    assert.ok(isErrorBody(parsed), body);
    assert.equal(parsed.code, 'VALIDATION_ERROR');
    assert.match(parsed.message, /Host header/);
    // HTTP/1.0 has no Host requirement
    const old = await new Promise<string>((resolve, reject) => {
      let text = '';
      const socket = net.connect(Number(port), '127.0.0.1', () => socket.write('GET /health HTTP/1.0\r\n\r\n'));
      socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    assert.match(old, /^HTTP\/1\.1 200 /);
  });

  it('names the field in validation errors', async () => {
    const cases: [unknown, RegExp][] = [
      [{ tier: 1 }, /^name is required$/],
      [{ name: 'x', tier: '1' }, /^tier must be an integer$/],
      [{ name: 'x', tier: 9 }, /^tier must be at most 3$/],
      [{ name: 'x', tier: 1, overageEnabled: 'yes' }, /^overageEnabled must be a boolean$/],
      [[1, 2], /body must be an object/],
      ['"just a string"', /body must be an object/],
    ];
    for (const [body, message] of cases) {
      const res = await call(gw.url, ADMIN_TOKEN, 'POST', '/v1/admin/protocols', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.ok(isErrorBody(res.body));
      assert.equal(res.body.code, 'VALIDATION_ERROR');
      assert.match(res.body.message, message);
    }
  });

  it('hides internals of a 5xx and logs it with the request id', async () => {
    const db = gw.herald.deps.db;
    await db.query('ALTER TABLE request_log_segments RENAME TO request_log_segments_moved');
    try {
      const res = await call(gw.url, acme.apiKey, 'GET', '/v1/requests');
      assert.equal(res.status, 500);
      assert.ok(isErrorBody(res.body));
      assert.equal(res.body.code, 'INTERNAL_ERROR');
      assert.ok(!/request_log|relation|SELECT/i.test(res.body.message), res.body.message);
      const requestId = res.headers.get('x-request-id')!;
      assert.ok(res.body.message.includes(requestId));
      const logged = log.records().find((l) => l.reqId === requestId && l.level >= 50);
      assert.ok(logged, 'the error is logged with its request id');
      assert.match(JSON.stringify(logged.err), /request_log/);
    } finally {
      await db.query('ALTER TABLE request_log_segments_moved RENAME TO request_log_segments');
    }
  });

  it('never writes the API key or admin token to the log', () => {
    const all = log.lines.join('\n');
    assert.ok(!all.includes(acme.apiKey));
    assert.ok(!all.includes(ADMIN_TOKEN));
  });
});
