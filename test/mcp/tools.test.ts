/**
 * The MCP documentation endpoint through the official SDK client (Streamable HTTP): every tool,
 * every pattern and the error answers, against a gateway serving a known docs/examples pair.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { connectClient, FIXTURE_EXAMPLES, FIXTURE_SLUGS, PATTERNS, textOf, writeFixture } from './fixture.js';

describe('MCP tools through the SDK client', () => {
  let gateway: TestGateway;
  let client: Client;
  let fixture: Awaited<ReturnType<typeof writeFixture>>;

  before(async () => {
    fixture = await writeFixture();
    gateway = await startGateway({
      env: { HERALD_DOCS_DIR: fixture.docsDir, HERALD_EXAMPLES_DIR: fixture.examplesDir, HERALD_IP_RATE_LIMIT: '10000' },
    });
    client = await connectClient(gateway.url);
  });

  after(async () => {
    await client?.close();
    await gateway?.close();
    await fixture?.remove();
  });

  const call = (name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: args });

  async function rejection(name: string, args: Record<string, unknown>): Promise<McpError> {
    const error = await call(name, args).then(
      (result) => assert.fail(`expected a JSON-RPC error, got ${JSON.stringify(result)}`),
      (error: unknown) => error,
    );
    assert.ok(error instanceof McpError, String(error));
    return error;
  }

  it('initializes: server info, the tools capability and instructions', () => {
    assert.deepEqual(client.getServerVersion(), { name: 'herald-docs', version: '1.0.0' });
    assert.ok(client.getServerCapabilities()?.tools);
    assert.match(client.getInstructions() ?? '', /get_herald_context/);
  });

  it('lists the four tools, each with a JSON Schema for its arguments', async () => {
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    assert.deepEqual(Object.keys(byName).sort(), ['get_doc_page', 'get_herald_context', 'get_integration_example', 'search_herald_docs']);
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object', tool.name);
      assert.ok(tool.description && tool.description.length > 20, tool.name);
      assert.equal((tool.inputSchema as { additionalProperties?: unknown }).additionalProperties, false, tool.name);
    }
    assert.deepEqual(byName.get_herald_context.inputSchema.properties, {});

    const search = byName.search_herald_docs.inputSchema as any;
    assert.deepEqual(search.required, ['query']);
    assert.equal(search.properties.query.type, 'string');
    assert.equal(search.properties.maxResults.type, 'integer');
    assert.equal(search.properties.maxResults.minimum, 1);
    assert.equal(search.properties.maxResults.maximum, 20);
    assert.equal(search.properties.maxResults.default, 5);

    const example = byName.get_integration_example.inputSchema as any;
    assert.deepEqual(example.required, ['pattern']);
    // The fixture has two of the nine patterns: the schema and the description offer those.
    assert.equal(example.properties.pattern.description, 'One of: backend, webhook');
    assert.match(byName.get_integration_example.description!, /Patterns: backend, webhook\.$/);
    // Every tool only reads the documentation this server holds.
    for (const tool of tools) assert.deepEqual(tool.annotations, { readOnlyHint: true, idempotentHint: true, openWorldHint: false }, tool.name);

    const page = byName.get_doc_page.inputSchema as any;
    assert.deepEqual(page.required, ['slug']);
    assert.match(page.properties.slug.description, /quickstart, webhooks, zz-appendix/);
  });

  it('get_herald_context assembles every page in reading order, the endpoints and the patterns', async () => {
    const result = await call('get_herald_context');
    assert.equal(result.isError, undefined);
    const context = textOf(result);
    const markers = [
      'Create a protocol, then send your first notification.',
      'Compute an HMAC-SHA256 of the raw body',
      'A page without front matter',
      '## API endpoints',
      '## Integration examples',
    ];
    const positions = markers.map((marker) => context.indexOf(marker));
    assert.ok(positions.every((position, i) => position > (positions[i - 1] ?? 0)), `missing or out of order: ${positions}`);
    assert.match(context, /`POST \/v1\/notify` — /);
    assert.match(context, /`GET \/v1\/notifications\/\{id\}` — /);
    assert.match(context, /`backend` \(`examples\/backend\.ts`\) — Sends one notification from a backend service\./);
    assert.match(context, /`webhook` \(`examples\/webhook\.ts`\) — Verifies the signature of an incoming webhook\./);
    assert.match(context, /`serverless` — not available on this server/);
    assert.doesNotMatch(context, /not markdown/);
    // Built once and served again unchanged.
    assert.equal(textOf(await call('get_herald_context')), context);
  });

  it('search_herald_docs ranks pages and answers {slug, title, snippet, score} as JSON text', async () => {
    const hits = JSON.parse(textOf(await call('search_herald_docs', { query: 'verifying signatures' })));
    assert.equal(hits[0].slug, 'webhooks');
    assert.equal(hits[0].title, 'Webhooks');
    assert.match(hits[0].snippet, /HMAC-SHA256/);
    assert.equal(typeof hits[0].score, 'number');
    for (const hit of hits) assert.deepEqual(Object.keys(hit).sort(), ['score', 'slug', 'snippet', 'title']);
    for (let i = 1; i < hits.length; i++) assert.ok(hits[i - 1].score >= hits[i].score);
  });

  it('search_herald_docs honours maxResults, defaults to 5 and finds by prefix and typo', async () => {
    const all = JSON.parse(textOf(await call('search_herald_docs', { query: 'page notification webhooks body' })));
    assert.equal(all.length, 3);
    const one = JSON.parse(textOf(await call('search_herald_docs', { query: 'page notification webhooks body', maxResults: 1 })));
    assert.deepEqual(one, all.slice(0, 1));
    assert.equal(JSON.parse(textOf(await call('search_herald_docs', { query: 'quickst' })))[0].slug, 'quickstart');
    assert.equal(JSON.parse(textOf(await call('search_herald_docs', { query: 'apendix' })))[0].slug, 'zz-appendix');
    assert.deepEqual(JSON.parse(textOf(await call('search_herald_docs', { query: 'xylophone' }))), []);
  });

  for (const pattern of PATTERNS) {
    const file = `${pattern}.ts` as keyof typeof FIXTURE_EXAMPLES;
    if (FIXTURE_EXAMPLES[file] !== undefined) {
      it(`get_integration_example serves examples/${pattern}.ts as written`, async () => {
        const result = await call('get_integration_example', { pattern });
        assert.equal(result.isError, undefined);
        assert.equal(textOf(result), FIXTURE_EXAMPLES[file]);
      });
    } else {
      it(`get_integration_example says ${pattern} is not available when its file is absent`, async () => {
        const result = await call('get_integration_example', { pattern });
        assert.equal(result.isError, true);
        assert.match(textOf(result), new RegExp(`The ${pattern} example is not available on this server. Available: backend, webhook$`));
      });
    }
  }

  it('get_integration_example answers an unknown pattern with isError listing the nine', async () => {
    const result = await call('get_integration_example', { pattern: 'shared-helper' });
    assert.equal(result.isError, true);
    assert.equal(textOf(result), `Unknown pattern "shared-helper". Valid patterns: ${PATTERNS.join(', ')}`);
  });

  it('get_doc_page answers each page, without its front matter', async () => {
    const quickstart = textOf(await call('get_doc_page', { slug: 'quickstart' }));
    assert.ok(quickstart.startsWith('# Quickstart\n'));
    assert.doesNotMatch(quickstart, /^---|slug:/m);
    assert.match(textOf(await call('get_doc_page', { slug: 'webhooks' })), /^# Webhooks\r\n[\s\S]*constant time/);
    assert.match(textOf(await call('get_doc_page', { slug: 'zz-appendix' })), /^# Appendix/);
  });

  it('get_doc_page answers an unknown slug with isError listing the valid slugs', async () => {
    for (const slug of ['nope', 'notes', 'quickstart.md', '']) {
      const result = await call('get_doc_page', { slug });
      assert.equal(result.isError, true, slug);
      assert.equal(textOf(result), `Unknown slug "${slug}". Valid slugs: ${FIXTURE_SLUGS.join(', ')}`);
    }
  });

  it('answers bad arguments with an isError result naming them, and unknown tools with JSON-RPC -32602', async () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['search_herald_docs', {}, /query/],
      ['search_herald_docs', { query: '' }, /query: must hold at least one word, not only spaces/],
      ['search_herald_docs', { query: '   ' }, /query: must hold at least one word, not only spaces/],
      ['search_herald_docs', { query: 42 }, /query/],
      ['search_herald_docs', { query: 'x', maxResults: 0 }, /maxResults/],
      ['search_herald_docs', { query: 'x', maxResults: 21 }, /maxResults/],
      ['search_herald_docs', { query: 'x', maxResults: 2.5 }, /maxResults/],
      ['search_herald_docs', { query: 'x', max: 3 }, /max/],
      ['get_integration_example', {}, /pattern/],
      ['get_integration_example', { pattern: ['backend'] }, /pattern/],
      ['get_doc_page', { slug: null }, /slug/],
      ['get_herald_context', { verbose: true }, /verbose/],
    ];
    for (const [name, args, message] of cases) {
      const result = await call(name, args);
      assert.equal(result.isError, true, `${name} ${JSON.stringify(args)}`);
      assert.match(textOf(result), new RegExp(`^Invalid arguments for tool ${name}: `), `${name} ${JSON.stringify(args)}`);
      assert.match(textOf(result), message, `${name} ${JSON.stringify(args)}`);
    }
    const error = await rejection('get_everything', {});
    assert.equal(error.code, ErrorCode.InvalidParams);
    assert.match(error.message, /Unknown tool "get_everything". Valid tools: get_herald_context, search_herald_docs, get_integration_example, get_doc_page/);
  });

  it('answers a method it does not serve with -32601', async () => {
    const error = await client.listResources().then(
      () => assert.fail('resources/list answered'),
      (error: unknown) => error,
    );
    assert.ok(error instanceof McpError);
    assert.equal(error.code, ErrorCode.MethodNotFound);
  });
});
