/**
 * The inputs the bad-input fuzzer found answered with a 5xx or outside the contract's error
 * shape, pinned as plain requests so they stay fixed whatever seed the fuzzer draws.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ERROR_STATUS } from '../../packages/server/src/http/errors.js';
import { ADMIN_TOKEN, call, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { registeredWallet } from '../support/wallets.js';
import { isContractError } from './support/contract-error.js';
import { rawRequest, type RawRequest } from './support/raw-http.js';

describe('inputs the fuzzer found', () => {
  let gw: TestGateway;
  let port: number;
  let protocol: TestProtocol;
  let wallet: string;
  let template: string;

  before(async () => {
    gw = await startGateway({ env: { HERALD_IP_RATE_LIMIT: '100000' } });
    port = Number(new URL(gw.url).port);
    protocol = await gw.createProtocol({ tier: 3 });
    wallet = await registeredWallet(gw.url);
    const created = await call(gw.url, protocol.apiKey, 'POST', '/v1/templates/email', {
      name: 'found',
      category: 'system',
      subjectTemplate: 'Hi {{name}}',
      htmlSource: '<p>{{name}}</p>',
      textSource: '{{name}}',
      serviceFooter: 'minimal',
    });
    template = created.body.templateId;
  });
  after(() => gw.close());

  function assertRefused(res: { status: number; body: unknown }, status: number, code: string) {
    const text = typeof res.body === 'string' ? res.body : JSON.stringify(res.body);
    assert.equal(res.status, status, text);
    assert.ok(isContractError(status, text), text);
    assert.equal(JSON.parse(text).code, code);
    assert.equal((ERROR_STATUS as Record<string, number>)[code], status);
  }

  it('answers a NUL character in a body, a path id or a query value with 400, not 500', async () => {
    const note = { wallet, subject: 'Hello', body: 'World', category: 'system' };
    for (const body of [
      { ...note, subject: 'a\u0000b' },
      { ...note, idempotencyKey: 'k\u0000' },
      { ...note, templateVariables: { name: '\u0000' } },
      // half a surrogate pair would be stored as U+FFFD, not as sent
      { ...note, subject: 'a\ud800b' },
      { ...note, body: '\udc00' },
    ]) {
      assertRefused(await call(gw.url, protocol.apiKey, 'POST', '/v1/notify', body), 400, 'VALIDATION_ERROR');
    }
    // Bytes that are not UTF-8 would be stored as U+FFFD: refused; a U+FFFD really sent is kept.
    const raw = (subject: Buffer) =>
      fetch(`${gw.url}/v1/notify`, {
        method: 'POST',
        headers: { authorization: `Bearer ${protocol.apiKey}`, 'content-type': 'application/json' },
        body: Buffer.concat([Buffer.from(`{"wallet":"${wallet}","category":"system","body":"World","subject":"`), subject, Buffer.from('"}')]),
      });
    const invalid = await raw(Buffer.from([0x61, 0xff, 0xfe, 0x62]));
    assert.equal(invalid.status, 400);
    assert.deepEqual(await invalid.json(), { statusCode: 400, error: 'Bad Request', message: 'Request body is not valid UTF-8 text', code: 'VALIDATION_ERROR' });
    const replacement = await raw(Buffer.from('a\uFFFDb', 'utf8'));
    assert.equal(replacement.status, 202);
    const stored = await call(gw.url, protocol.apiKey, 'GET', `/v1/notifications/${((await replacement.json()) as { notificationId: string }).notificationId}`);
    assert.equal((stored.body as { subject: string }).subject, 'a\uFFFDb');
    // A preview stores nothing, and still refuses what the send refuses, naming the field.
    const preview = await call(gw.url, protocol.apiKey, 'POST', '/v1/preview', { ...note, body: 'a\u0000b' });
    assertRefused(preview, 400, 'VALIDATION_ERROR');
    assert.equal((preview.body as { message: string }).message, 'body must not contain the NUL character (\\u0000)');
    const bulk = await call(gw.url, protocol.apiKey, 'POST', '/v1/notify/bulk', { notifications: [note, { ...note, subject: '\u0000' }] });
    assert.equal((bulk.body as { message: string }).message, 'notifications[1].subject must not contain the NUL character (\\u0000)');
    assertRefused(await call(gw.url, ADMIN_TOKEN, 'POST', '/v1/admin/protocols', { name: 'a\u0000', tier: 1 }), 400, 'VALIDATION_ERROR');
    for (const [path, field] of [['/v1/notifications/%00', 'id'], ['/v1/schedule/abc%00', 'id'], ['/v1/requests?endpoint=%00', 'endpoint'], ['/v1/templates/email/tmpl_%00', 'id']]) {
      const res = await call(gw.url, protocol.apiKey, 'GET', path);
      assertRefused(res, 400, 'VALIDATION_ERROR');
      assert.equal((res.body as { message: string }).message, `${field} must not contain the NUL character (\\u0000)`, path);
    }
  });

  it('refuses JSON nested deeper than 32 levels before it reaches the database', async () => {
    const deep = (levels: number) => `{"wallet":"${wallet}","subject":"s","body":"b","category":"system","templateVariables":{"a":${'['.repeat(levels)}${']'.repeat(levels)}}}`;
    assert.equal((await call(gw.url, protocol.apiKey, 'POST', '/v1/notify', deep(29))).status, 202, 'nesting within the limit is accepted');
    for (const levels of [31, 1000, 100_000]) assertRefused(await call(gw.url, protocol.apiKey, 'POST', '/v1/notify', deep(levels)), 400, 'VALIDATION_ERROR');
    assert.equal((await call(gw.url, undefined, 'GET', '/health')).status, 200, 'the embedded database is still up');
  });

  it('answers out-of-range numbers in the query and the path with 400', async () => {
    assertRefused(await call(gw.url, protocol.apiKey, 'GET', '/v1/requests?page=99999999999999999999'), 400, 'VALIDATION_ERROR');
    assertRefused(await call(gw.url, protocol.apiKey, 'GET', '/v1/notifications?page=1000001'), 400, 'VALIDATION_ERROR');
    assert.equal((await call(gw.url, protocol.apiKey, 'GET', '/v1/notifications?page=1000000')).status, 200);
    for (const version of ['3000000000', '99999999999999999999']) {
      assertRefused(await call(gw.url, protocol.apiKey, 'GET', `/v1/templates/email/${template}/versions/${version}`), 400, 'VALIDATION_ERROR');
    }
  });

  /** What every answer carries, errors included: a request id and the headers of the limit it counted against. */
  function assertEveryAnswerHeaders(headers: { get(name: string): string | null }, limit: number) {
    assert.match(headers.get('x-request-id') ?? '', /^[\w.-]{1,64}$/);
    assert.equal(headers.get('x-ratelimit-limit'), String(limit));
    assert.match(headers.get('x-ratelimit-remaining') ?? '', /^\d+$/);
    assert.ok(Math.abs(Number(headers.get('x-ratelimit-reset')) - Date.now() / 1000) < 5, headers.get('x-ratelimit-reset') ?? 'no reset');
  }

  it('answers URLs the router refuses in the contract shape, with the per-IP limit headers', async () => {
    for (const [path, status, code] of [
      ['/v1/notifications/%FF', 400, 'VALIDATION_ERROR'],
      [`/v1/notifications/${'a'.repeat(5000)}`, 414, 'URI_TOO_LONG'],
    ] as const) {
      const res = await call(gw.url, protocol.apiKey, 'GET', path);
      assertRefused(res, status, code);
      assertEveryAnswerHeaders(res.headers, 100_000);
    }
    // An open-pixel link is answered with its image, however broken: a mail client shows no error.
    for (const path of ['/track/open/%ZZ', `/track/open/${'a'.repeat(5000)}`]) {
      const res = await fetch(`${gw.url}${path}`);
      assert.deepEqual([res.status, res.headers.get('content-type'), res.headers.get('cache-control')], [200, 'image/gif', 'no-store'], path);
      assert.equal(Buffer.from(await res.arrayBuffer()).subarray(0, 6).toString('latin1'), 'GIF89a');
      assert.match(res.headers.get('x-request-id') ?? '', /^[\w.-]{1,64}$/);
    }
    // Only the pixel's own route, for the methods it answers.
    for (const [method, path] of [['POST', '/track/open/%ZZ'], ['GET', '/track/openX/%ZZ'], ['GET', '/track/open/a/b%ZZ']] as const) {
      assertRefused(await call(gw.url, undefined, method, path), 400, 'VALIDATION_ERROR');
    }
  });

  it('answers a refused URL over the per-IP limit with 429 and Retry-After', async () => {
    const limited = await startGateway({ env: { HERALD_IP_RATE_LIMIT: '2' } });
    try {
      const path = `/v1/notifications/${'a'.repeat(5000)}`;
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await call(limited.url, undefined, 'GET', path));
      // the window may turn over between two calls: at least one was counted over the limit
      const refused = answers.filter((res) => res.status === 429);
      assert.ok(refused.length >= 1, answers.map((res) => res.status).join(','));
      for (const res of refused) {
        assertRefused(res, 429, 'RATE_LIMIT_EXCEEDED');
        assert.match(res.headers.get('retry-after') ?? '', /^\d+$/);
        assert.equal(res.headers.get('x-ratelimit-remaining'), '0');
      }
      for (const res of answers.filter((res) => res.status !== 429)) assertRefused(res, 414, 'URI_TOO_LONG');
    } finally {
      await limited.close();
    }
  });

  it("answers requests Node's HTTP parser refuses in the contract shape", async () => {
    const send = async (request: RawRequest) => (await rawRequest(port, request)).responses;
    const cases: Array<[RawRequest, number, string]> = [
      [{ method: 'GET', target: '/health', headers: [['Bad Header', 'x']] }, 400, 'VALIDATION_ERROR'],
      [{ method: 'GET', target: '/health', headers: [['X-Control', 'a\x01b']] }, 400, 'VALIDATION_ERROR'],
      [{ method: 'GET', target: '/health', headers: [['X-Huge', 'h'.repeat(20_000)]] }, 431, 'HEADERS_TOO_LARGE'],
      [{ method: 'GET', target: '/v1/usage?x=\u00e9', headers: [['Authorization', `Bearer ${protocol.apiKey}`]] }, 400, 'VALIDATION_ERROR'],
    ];
    for (const [request, status, code] of cases) {
      const responses = await send(request);
      assert.equal(responses.length, 1, JSON.stringify(request.headers));
      assertRefused({ status: responses[0].status, body: responses[0].body }, status, code);
      const headers = responses[0].headers;
      assertEveryAnswerHeaders({ get: (name) => headers[name] ?? null }, 100_000);
    }
    // A Content-Length shorter than the body: the rest reads as a second, malformed request.
    const body = Buffer.from(JSON.stringify({ wallet, subject: 's', body: 'b', category: 'system' }));
    const split = await send({ method: 'POST', target: '/v1/notify', headers: [['Authorization', `Bearer ${protocol.apiKey}`], ['Content-Type', 'application/json']], body, framing: 'short' });
    assert.ok(split.length >= 1);
    for (const response of split) assert.ok(response.status < 500 && isContractError(response.status, response.body), `${response.status} ${response.body}`);
  });
});
