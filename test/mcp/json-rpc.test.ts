/**
 * The MCP endpoint over raw HTTP, as the contract describes it: JSON-RPC 2.0 with only
 * `Content-Type: application/json`, and the standard JSON-RPC errors.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { atNextSecond, startGateway, waitFor, type TestGateway } from '../support/gateway.js';
import { writeFixture } from './fixture.js';

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'curl', version: '8' } },
};

function isJsonRpcError(body: any, code: number, id: string | number | null = null): void {
  assert.equal(body?.jsonrpc, '2.0', JSON.stringify(body));
  assert.equal(body.id, id, JSON.stringify(body));
  assert.equal(body.error?.code, code, JSON.stringify(body));
  assert.equal(typeof body.error.message, 'string');
  assert.equal(body.result, undefined);
}

describe('MCP endpoint over raw JSON-RPC', () => {
  let gateway: TestGateway;
  let fixture: Awaited<ReturnType<typeof writeFixture>>;

  before(async () => {
    fixture = await writeFixture();
    gateway = await startGateway({
      env: { HERALD_DOCS_DIR: fixture.docsDir, HERALD_EXAMPLES_DIR: fixture.examplesDir, HERALD_IP_RATE_LIMIT: '10000', HERALD_BODY_LIMIT: '4096' },
    });
  });

  after(async () => {
    await gateway?.close();
    await fixture?.remove();
  });

  /**
   * POST /mcp with exactly the given headers: Content-Type only by default. node:http, because
   * fetch adds `Accept: *\/*` to every request.
   */
  function post(body: unknown, headers: Record<string, string> = {}, path = '/mcp'): Promise<Answer> {
    const payload = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(`${gateway.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const answerHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') answerHeaders.set(name, value);
          resolve({ status: res.statusCode!, headers: answerHeaders, body: text ? JSON.parse(text) : undefined });
        });
      });
      req.on('error', reject);
      sent.push(req.getHeaderNames());
      req.end(payload);
    });
  }
  const sent: string[][] = [];

  it('initialize with protocolVersion 2024-11-05 answers that version, with no Accept header and no key', async () => {
    const res = await post(INITIALIZE);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(res.headers.get('mcp-session-id'), null, 'stateless: no session');
    assert.ok(res.headers.get('x-request-id'));
    assert.ok(res.headers.get('x-ratelimit-limit'));
    assert.deepEqual(sent.at(-1), ['content-type', 'host'], 'the request carried no Accept header');
    assert.equal(res.body.jsonrpc, '2.0');
    assert.equal(res.body.id, 1);
    assert.equal(res.body.result.protocolVersion, '2024-11-05');
    assert.deepEqual(res.body.result.serverInfo, { name: 'herald-docs', version: '1.0.0' });
    assert.ok(res.body.result.capabilities.tools);
  });

  it('initialize does not promise list-changed notifications: the tool list of a stateless server never changes', async () => {
    const res = await post(INITIALIZE);
    assert.deepEqual(res.body.result.capabilities, { tools: { listChanged: false } });
  });

  it('an unsupported protocolVersion is answered with the latest the server speaks', async () => {
    const res = await post({ ...INITIALIZE, params: { ...INITIALIZE.params, protocolVersion: '1999-01-01' } });
    assert.equal(res.status, 200);
    assert.match(res.body.result.protocolVersion, /^\d{4}-\d{2}-\d{2}$/);
    assert.notEqual(res.body.result.protocolVersion, '1999-01-01');
  });

  it('serves Accept: application/json alone, */*, and the full header the SDK sends', async () => {
    for (const accept of ['application/json', '*/*', 'application/json, text/event-stream']) {
      const res = await post({ jsonrpc: '2.0', id: 'a', method: 'ping' }, { accept });
      assert.equal(res.status, 200, accept);
      assert.deepEqual(res.body, { jsonrpc: '2.0', id: 'a', result: {} }, accept);
    }
  });

  it('tools/list and tools/call answer plain JSON without an Accept header', async () => {
    const list = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.result.tools.map((tool: { name: string }) => tool.name),
      ['get_herald_context', 'search_herald_docs', 'get_integration_example', 'get_doc_page'],
    );
    const call = await post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_doc_page', arguments: { slug: 'quickstart' } } });
    assert.equal(call.status, 200);
    assert.equal(call.body.id, 3);
    assert.match(call.body.result.content[0].text, /^# Quickstart/);
    const search = await post({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'search_herald_docs', arguments: { query: 'signatures' } } });
    assert.equal(JSON.parse(search.body.result.content[0].text)[0].slug, 'webhooks');
  });

  it('a notification is accepted with 202 and no body', async () => {
    const res = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    assert.equal(res.status, 202);
    assert.equal(res.body, undefined);
  });

  it('answers a batch with one response per request, each judged on its own', async () => {
    const res = await post([
      { jsonrpc: '2.0', id: 10, method: 'ping' },
      { jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name: 'get_doc_page', arguments: {} } },
    ]);
    assert.equal(res.status, 200);
    const byId = Object.fromEntries(res.body.map((answer: { id: number }) => [answer.id, answer]));
    assert.deepEqual(byId[10].result, {});
    assert.equal(byId[11].result.isError, true);
    assert.match(byId[11].result.content[0].text, /^Invalid arguments for tool get_doc_page: slug/);
  });

  it('answers every member of a batch in order: an initialize among them, and members sharing an id', async () => {
    const res = await post([
      INITIALIZE,
      { jsonrpc: '2.0', id: 'a', method: 'ping' },
      { jsonrpc: '2.0', id: 'a', method: 'tools/list' },
      { foo: 1 },
      { jsonrpc: '2.0', id: 1, method: 'ping' },
    ]);
    assert.equal(res.status, 200);
    assert.equal(res.body.length, 5, JSON.stringify(res.body));
    assert.equal(res.body[0].id, 1);
    assert.equal(res.body[0].result.protocolVersion, '2024-11-05');
    assert.deepEqual(res.body[1], { jsonrpc: '2.0', id: 'a', result: {} });
    assert.equal(res.body[2].id, 'a');
    assert.equal(res.body[2].result.tools.length, 4);
    isJsonRpcError(res.body[3], -32600);
    assert.deepEqual(res.body[4], { jsonrpc: '2.0', id: 1, result: {} });
  });

  it("answers each invalid member of a batch -32600 beside the valid members' answers", async () => {
    const res = await post([
      { jsonrpc: '2.0', id: 20, method: 'ping' },
      { foo: 1 },
      7,
      { jsonrpc: '1.0', id: 21, method: 'ping' },
      { jsonrpc: '2.0', id: 22, method: 'tools/call', params: { name: 'get_doc_page', arguments: { slug: 'nope' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
    ]);
    assert.equal(res.status, 200);
    assert.ok(Array.isArray(res.body));
    assert.equal(res.body.length, 5, 'one answer per request, none for the notification');
    const byId = new Map(res.body.filter((a: { id: unknown }) => a.id !== null).map((a: { id: number }) => [a.id, a]));
    assert.deepEqual((byId.get(20) as { result: unknown }).result, {});
    isJsonRpcError(byId.get(21), -32600, 21);
    assert.equal((byId.get(22) as { result: { isError: boolean } }).result.isError, true);
    const anonymous = res.body.filter((a: { id: unknown }) => a.id === null);
    assert.equal(anonymous.length, 2);
    for (const answer of anonymous) isJsonRpcError(answer, -32600);
    assert.ok(res.headers.get('x-request-id'));
    assert.ok(res.headers.get('x-ratelimit-limit'));
  });

  it('answers a batch with an array even for one request, and a batch of invalid members with their errors (400)', async () => {
    const one = await post([{ jsonrpc: '2.0', id: 30, method: 'ping' }]);
    assert.equal(one.status, 200);
    assert.deepEqual(one.body, [{ jsonrpc: '2.0', id: 30, result: {} }]);
    const invalid = await post([1, { id: 31 }]);
    assert.equal(invalid.status, 400);
    assert.equal(invalid.body.length, 2);
    isJsonRpcError(invalid.body[0], -32600);
    isJsonRpcError(invalid.body[1], -32600, 31);
    const notifications = await post([{ jsonrpc: '2.0', method: 'notifications/initialized' }, 'x']);
    assert.equal(notifications.status, 200);
    assert.equal(notifications.body.length, 1);
    isJsonRpcError(notifications.body[0], -32600);
  });

  it('-32700 for a malformed or empty body', async () => {
    for (const raw of ['{"jsonrpc":"2.0","id":1,', '{bad json}', '']) {
      const res = await post(raw);
      assert.equal(res.status, 400, raw);
      isJsonRpcError(res.body, -32700);
    }
  });

  it('-32700 for a body whose bytes are not UTF-8, and the text of one that is', async () => {
    // "café" in Latin-1: 0xE9 alone is no UTF-8; read as text it would become U+FFFD.
    const latin1 = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_herald_docs","arguments":{"query":"caf'), Buffer.from([0xe9]), Buffer.from('"}}}')]);
    const refused = await post(latin1);
    assert.equal(refused.status, 400);
    isJsonRpcError(refused.body, -32700);
    assert.match(refused.body.error.message, /not valid UTF-8/);
    // U+FFFD itself, sent as UTF-8 or as a JSON escape, is text like any other.
    const utf8 = await post(Buffer.from('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_herald_docs","arguments":{"query":"café \\uFFFD �"}}}', 'utf8'));
    assert.equal(utf8.status, 200, JSON.stringify(utf8.body));
    assert.equal(utf8.body.id, 2);
    assert.ok(utf8.body.result && !utf8.body.error, JSON.stringify(utf8.body));
  });

  it('-32600 for JSON that is not a JSON-RPC request', async () => {
    const cases: [unknown, string | number | null][] = [
      [{}, null],
      [[], null],
      [123, null],
      [{ jsonrpc: '1.0', id: 5, method: 'ping' }, 5],
      [{ id: 6, method: 'ping' }, 6],
      [{ jsonrpc: '2.0', id: 7, method: 42 }, 7],
      [{ jsonrpc: '2.0', id: 8, method: 'tools/list', params: 'all' }, 8],
    ];
    for (const [body, id] of cases) {
      const res = await post(body);
      assert.equal(res.status, 400, JSON.stringify(body));
      isJsonRpcError(res.body, -32600, id);
    }
  });

  it('-32600 naming the members a message has that JSON-RPC 2.0 does not define', async () => {
    const res = await post({ jsonrpc: '2.0', id: 9, method: 'ping', extra: 'field' });
    assert.equal(res.status, 400);
    isJsonRpcError(res.body, -32600, 9);
    assert.match(res.body.error.message, /it has a member JSON-RPC 2\.0 does not define: "extra"$/);
    const many = await post({ jsonrpc: '2.0', id: 10, method: 'ping', a: 1, b: 2, c: 3, d: 4, e: 5, f: 6 });
    assert.match(many.body.error.message, /members JSON-RPC 2\.0 does not define: "a", "b", "c", "d", "e", …$/);
  });

  it('-32601 for an unknown method', async () => {
    // Names of an object's own machinery are methods like any other this server does not serve.
    for (const method of ['resources/list', 'prompts/get', 'tools/delete', 'toString', 'constructor', '__proto__', 'hasOwnProperty', 'valueOf']) {
      const res = await post({ jsonrpc: '2.0', id: 'm', method, params: {} });
      assert.equal(res.status, 200, method);
      isJsonRpcError(res.body, -32601, 'm');
      const bare = await post({ jsonrpc: '2.0', id: 'n', method });
      assert.equal(bare.status, 200, method);
      isJsonRpcError(bare.body, -32601, 'n');
    }
    const batch = await post([{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 2, method: 'toString' }]);
    assert.equal(batch.status, 200);
    assert.deepEqual(batch.body[0], { jsonrpc: '2.0', id: 1, result: {} });
    isJsonRpcError(batch.body[1], -32601, 2);
  });

  it('-32602 for invalid params: unknown tools, malformed initialize and tools/call, unknown cursors, a malformed _meta', async () => {
    const cases: [string, unknown, RegExp][] = [
      ['tools/call', { name: 'no_such_tool', arguments: {} }, /Unknown tool "no_such_tool"/],
      ['tools/call', { arguments: {} }, /name/],
      ['tools/call', { name: 'get_doc_page', arguments: 'slug=quickstart' }, /arguments/],
      ['tools/list', { cursor: 'abc' }, /^Invalid params for tools\/list: unknown cursor "abc"/],
      ['tools/call', { name: 'get_doc_page', arguments: { slug: 'mcp' }, _meta: 5 }, /^Invalid params for tools\/call: params\._meta must be an object/],
      ['ping', { _meta: { progressToken: {} } }, /^Invalid params for ping: params\._meta/],
    ];
    for (const [method, params, message] of cases) {
      const res = await post({ jsonrpc: '2.0', id: 9, method, params });
      assert.equal(res.status, 200, JSON.stringify(params));
      isJsonRpcError(res.body, -32602, 9);
      assert.match(res.body.error.message, message);
    }
    const init = await post({ jsonrpc: '2.0', id: 'i', method: 'initialize', params: { capabilities: {} } });
    isJsonRpcError(init.body, -32602, 'i');
    assert.match(init.body.error.message, /protocolVersion/);
    // A notification with a malformed _meta gets no answer, as any notification; in a batch, a request's -32602 takes its place.
    const notification = await post({ jsonrpc: '2.0', method: 'notifications/initialized', params: { _meta: [] } });
    assert.equal(notification.status, 202);
    assert.equal(notification.body, undefined);
    const batch = await post([
      { jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: 'x' } },
      { jsonrpc: '2.0', method: 'notifications/initialized', params: { _meta: 1 } },
      { jsonrpc: '2.0', id: 2, method: 'ping', params: { _meta: { progressToken: 7 } } },
    ]);
    assert.equal(batch.status, 200);
    assert.equal(batch.body.length, 2);
    isJsonRpcError(batch.body[0], -32602, 1);
    assert.deepEqual(batch.body[1], { jsonrpc: '2.0', id: 2, result: {} });
    // The rule is named whole: progressToken must be an integer when it is a number.
    const fraction = await post({ jsonrpc: '2.0', id: 3, method: 'ping', params: { _meta: { progressToken: 1.5 } } });
    isJsonRpcError(fraction.body, -32602, 3);
    assert.match(fraction.body.error.message, /progressToken \(if any\) a string or an integer/);
    // A method not served is -32601 whatever its _meta; an unsupported MCP-Protocol-Version is refused first.
    const unserved = await post({ jsonrpc: '2.0', id: 4, method: 'resources/list', params: { _meta: 'x' } });
    assert.equal(unserved.status, 200);
    isJsonRpcError(unserved.body, -32601, 4);
    const version = await post({ jsonrpc: '2.0', id: 5, method: 'ping', params: { _meta: 'x' } }, { 'mcp-protocol-version': '1999-01-01' });
    assert.equal(version.status, 400);
    isJsonRpcError(version.body, -32000, 5);
  });

  it('answers tool arguments that do not match the schema with an isError result naming them (MCP 2025-11-25)', async () => {
    const cases: [unknown, RegExp][] = [
      [{ name: 'search_herald_docs', arguments: { query: 1 } }, /^Invalid arguments for tool search_herald_docs: query/],
      [{ name: 'search_herald_docs', arguments: { query: 'x', maxResults: 50 } }, /maxResults/],
      [{ name: 'get_integration_example', arguments: { pattern: 3 } }, /pattern/],
      [{ name: 'get_doc_page' }, /slug/],
    ];
    for (const [params, message] of cases) {
      const res = await post({ jsonrpc: '2.0', id: 9, method: 'tools/call', params });
      assert.equal(res.status, 200, JSON.stringify(params));
      assert.equal(res.body.id, 9);
      assert.equal(res.body.error, undefined, JSON.stringify(res.body));
      assert.equal(res.body.result.isError, true);
      assert.equal(res.body.result.content[0].type, 'text');
      assert.match(res.body.result.content[0].text, message);
    }
  });

  it('serves a tools/call asking to run as a task as a plain call (no task support is declared)', async () => {
    const res = await post({ jsonrpc: '2.0', id: 't', method: 'tools/call', params: { name: 'get_doc_page', arguments: { slug: 'quickstart' }, task: { ttl: 1000 } } });
    assert.equal(res.status, 200);
    assert.equal(res.body.id, 't');
    assert.equal(res.body.result.isError, undefined, JSON.stringify(res.body));
    assert.match(res.body.result.content[0].text, /Quickstart/i);
  });

  it('answers at /mcp/ as at /mcp', async () => {
    const ping = await post({ jsonrpc: '2.0', id: 1, method: 'ping' }, {}, '/mcp/');
    assert.equal(ping.status, 200);
    assert.deepEqual(ping.body, { jsonrpc: '2.0', id: 1, result: {} });
    assert.equal(ping.headers.get('access-control-allow-origin'), '*');
    const bad = await post('{', {}, '/mcp/');
    isJsonRpcError(bad.body, -32700);
  });

  it('every answered request, hijacked by the transport or refused before it, leaves the count of requests in flight', async () => {
    await post({ jsonrpc: '2.0', id: 20, method: 'ping' });
    await post('{bad json}');
    await waitFor(async () => gateway.herald.app!.inFlight.size === 0);
  });

  it('every method but POST and OPTIONS answers 405 with a JSON-RPC error and Allow: POST, OPTIONS', async () => {
    for (const method of ['GET', 'DELETE', 'PUT', 'PATCH']) {
      const res = await fetch(`${gateway.url}/mcp`, { method });
      assert.equal(res.status, 405, method);
      assert.equal(res.headers.get('allow'), 'POST, OPTIONS', method);
      isJsonRpcError(await res.json(), -32000);
      assert.ok(res.headers.get('x-request-id'), method);
    }
    const head = await fetch(`${gateway.url}/mcp`, { method: 'HEAD' });
    assert.equal(head.status, 405);
    assert.equal(head.headers.get('allow'), 'POST, OPTIONS');
  });

  it("answers a browser's CORS preflight and lets any origin read its answers and their headers", async () => {
    const preflight = await fetch(`${gateway.url}/mcp`, {
      method: 'OPTIONS',
      headers: { origin: 'https://agent.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, mcp-protocol-version' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
    assert.equal(preflight.headers.get('access-control-allow-methods'), 'POST');
    assert.equal(preflight.headers.get('access-control-allow-headers'), 'content-type, mcp-protocol-version');
    assert.equal(preflight.headers.get('access-control-max-age'), '86400');
    assert.equal(await preflight.text(), '');
    const answer = await fetch(`${gateway.url}/mcp`, {
      method: 'POST',
      headers: { origin: 'https://agent.example', 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('access-control-allow-origin'), '*');
    assert.match(answer.headers.get('access-control-expose-headers')!, /X-Request-Id.*Retry-After/);
    // Refusals too: a browser client can read the JSON-RPC error.
    const refused = await fetch(`${gateway.url}/mcp`, { method: 'POST', headers: { origin: 'https://agent.example', 'content-type': 'text/plain' }, body: '{}' });
    assert.equal(refused.status, 415);
    assert.equal(refused.headers.get('access-control-allow-origin'), '*');
  });

  it('refuses other content types and oversize bodies with a JSON-RPC error, not the REST error shape', async () => {
    const text = await fetch(`${gateway.url}/mcp`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify(INITIALIZE) });
    assert.equal(text.status, 415);
    isJsonRpcError(await text.json(), -32000);
    const big = await post({ ...INITIALIZE, params: { ...INITIALIZE.params, clientInfo: { name: 'x'.repeat(5000), version: '1' } } });
    assert.equal(big.status, 413);
    isJsonRpcError(big.body, -32000);
  });

  it('refuses a compressed body (415), as the REST API does, instead of reading it as JSON', async () => {
    const zipped = await fetch(`${gateway.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify(INITIALIZE)),
    });
    assert.equal(zipped.status, 415);
    const body = await zipped.json();
    isJsonRpcError(body, -32000);
    assert.equal(body.error.message, 'Unsupported Media Type: Content-Encoding "gzip" is not supported; send the JSON body uncompressed');
    // Declared but not applied: refused all the same, whatever the body holds.
    const declared = await post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { 'content-encoding': 'br' });
    assert.equal(declared.status, 415);
    assert.equal((await post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { 'content-encoding': 'identity' })).status, 200);
  });

  it('refuses an MCP-Protocol-Version header it does not speak with -32000 (400)', async () => {
    const res = await post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { 'mcp-protocol-version': '1999-01-01' });
    assert.equal(res.status, 400);
    isJsonRpcError(res.body, -32000, 1);
    assert.match(res.body.error.message, /1999-01-01/);
    const batch = await post([{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 2, method: 'ping' }], { 'mcp-protocol-version': '1999-01-01' });
    assert.equal(batch.status, 400);
    isJsonRpcError(batch.body, -32000);
    assert.equal((await post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { 'mcp-protocol-version': '2025-03-26' })).status, 200);
  });

  it('answers a batch of notifications alone with 202, a batch in its order, and refuses a batch of more than 100 messages', async () => {
    const notifications = await post([{ jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', method: 'notifications/cancelled', params: {} }]);
    assert.equal(notifications.status, 202);
    assert.equal(notifications.body, undefined);
    const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' });
    const twenty = await post(Array.from({ length: 20 }, (_, i) => ping(i)));
    assert.equal(twenty.status, 200);
    assert.deepEqual(twenty.body.map((answer: { id: number }) => answer.id), Array.from({ length: 20 }, (_, i) => i), 'in the batch order');
    // This gateway's body limit is 4 KB: 101 members of the smallest message fit in it.
    const over = await post(`[${Array.from({ length: 101 }, () => 1).join(',')}]`);
    assert.equal(over.status, 400);
    isJsonRpcError(over.body, -32600);
    assert.equal(over.body.error.message, 'Invalid Request: a batch holds at most 100 messages, this one has 101');
  });

  it('a client that does not accept JSON is refused (406), with a message that asks for JSON alone', async () => {
    const res = await post(INITIALIZE, { accept: 'text/html' });
    assert.equal(res.status, 406);
    isJsonRpcError(res.body, -32000, INITIALIZE.id);
    const batch = await post([INITIALIZE, { jsonrpc: '2.0', id: 9, method: 'ping' }], { accept: 'text/html' });
    assert.equal(batch.status, 406);
    isJsonRpcError(batch.body, -32000, null);
    // docs/mcp.md: application/json alone is enough, so the message must not ask for event streams.
    assert.equal(res.body.error.message, 'Not Acceptable: the client must accept application/json');
    assert.ok(res.headers.get('x-request-id'));
  });
});

describe('MCP endpoint under the per-IP rate limit', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway({ env: { HERALD_IP_RATE_LIMIT: '2' } });
  });
  after(() => gateway?.close());

  it('answers 429 as a JSON-RPC error with Retry-After', async () => {
    await atNextSecond();
    const send = () =>
      fetch(`${gateway.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) });
    const answers = [await send(), await send(), await send()];
    assert.deepEqual(
      answers.map((res) => res.status),
      [200, 200, 429],
    );
    const limited = answers[2];
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    assert.equal(limited.headers.get('x-ratelimit-remaining'), '0');
    isJsonRpcError(await limited.json(), -32000);
  });

  it('counts each member of a batch as a request: a batch over the limit is refused whole', async () => {
    await atNextSecond();
    const batch = (size: number) =>
      fetch(`${gateway.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(Array.from({ length: size }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' }))),
      });
    const two = await batch(2);
    assert.equal(two.status, 200);
    assert.equal(two.headers.get('x-ratelimit-remaining'), '0', 'both members counted');
    assert.equal((await two.json()).length, 2);
    // Two members after one request in the same second: over the limit, refused whole.
    await atNextSecond();
    assert.equal((await batch(1)).status, 200);
    const over = await batch(2);
    assert.equal(over.status, 429);
    assert.ok(Number(over.headers.get('retry-after')) >= 1);
    isJsonRpcError(await over.json(), -32000);

    // A batch of invalid members is charged member by member as well.
    await atNextSecond();
    assert.equal((await batch(1)).status, 200);
    const invalid = await fetch(`${gateway.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([1, 2]) });
    assert.equal(invalid.status, 429);
    isJsonRpcError(await invalid.json(), -32000);
  });

  it('refuses a batch larger than a second of the limit allows with -32600, since it could never be served', async () => {
    await atNextSecond();
    const res = await fetch(`${gateway.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(Array.from({ length: 3 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' }))),
    });
    assert.equal(res.status, 400);
    const body = await res.json();
    isJsonRpcError(body, -32600);
    assert.equal(body.error.message, 'Invalid Request: a batch holds at most 2 messages, this one has 3');
  });
});
