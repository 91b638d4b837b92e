/**
 * The gateway's default docs/ and examples/ (the repository's own) load and are served, whatever
 * pages and examples exist at the time the suite runs.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { loadConfig } from '../../packages/server/src/config.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { connectClient, PATTERNS, textOf } from './fixture.js';

const DOCS_DIR = fileURLToPath(new URL('../../docs/', import.meta.url));
const EXAMPLES_DIR = fileURLToPath(new URL('../../examples/', import.meta.url));

/** slug → file text, read the simple way (not with the code under test). */
function repoPages(): Map<string, string> {
  const pages = new Map<string, string>();
  for (const name of existsSync(DOCS_DIR) ? readdirSync(DOCS_DIR).filter((n) => n.endsWith('.md')) : []) {
    const text = readFileSync(`${DOCS_DIR}${name}`, 'utf8');
    const slug = /^---\r?\n[\s\S]*?^slug:\s*(\S+)\s*$/m.exec(text)?.[1] ?? name.slice(0, -3);
    pages.set(slug, text);
  }
  return pages;
}

describe('MCP endpoint on the repository docs and examples', () => {
  let gateway: TestGateway;
  let client: Client;

  before(async () => {
    gateway = await startGateway({ env: { HERALD_IP_RATE_LIMIT: '10000' } });
    client = await connectClient(gateway.url);
  });

  after(async () => {
    await client?.close();
    await gateway?.close();
  });

  const call = (name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: args });

  it('defaults to the docs/ and examples/ at the repository root', () => {
    const config = loadConfig({});
    assert.equal(config.docsDir, DOCS_DIR.replace(/\/$/, ''));
    assert.equal(config.examplesDir, EXAMPLES_DIR.replace(/\/$/, ''));
    // relative to the working directory, or absolute; each must exist
    const overridden = loadConfig({ HERALD_DOCS_DIR: path.relative(process.cwd(), path.join(DOCS_DIR, 'nested', '..')), HERALD_EXAMPLES_DIR: os.tmpdir() });
    assert.equal(overridden.docsDir, DOCS_DIR.replace(/\/$/, ''));
    assert.equal(overridden.examplesDir, os.tmpdir());
  });

  it('serves every page of docs/ by its slug', async () => {
    const pages = repoPages();
    assert.ok(pages.size > 0, 'docs/ has pages');
    for (const [slug, text] of pages) {
      const result = await call('get_doc_page', { slug });
      assert.equal(result.isError, undefined, slug);
      const body = textOf(result);
      assert.ok(body.length > 0 && text.includes(body.trim().split('\n')[0]), slug);
    }
  });

  it('assembles the context from every page but those marked `context: false`, which it lists', async () => {
    const context = textOf(await call('get_herald_context'));
    const pages = repoPages();
    for (const [slug, text] of pages) {
      const left = /^---\r?\n[\s\S]*?^context:\s*false\s*$/m.test(text);
      assert.equal(context.includes(`<!-- page: ${slug} -->`), !left, slug);
      if (left) assert.match(context, new RegExp(`\\(\`${slug}\`\\) — not included below`), slug);
    }
    // The benchmark record is the one page left out: an agent integrating needs the rest.
    assert.equal(context.includes('<!-- page: performance -->'), !pages.has('performance'));
    assert.match(context, /## API endpoints/);
  });

  it('names the pages the context only lists in its tool description', async () => {
    const { tools } = await client.listTools();
    const description = tools.find((tool) => tool.name === 'get_herald_context')!.description!;
    assert.match(description, /the documentation pages \(performance only listed: read with get_doc_page\)/);
  });

  it('opens the context with the architecture page, then the quickstart', async () => {
    const context = textOf(await call('get_herald_context'));
    const order = [...context.matchAll(/<!-- page: (\S+) -->/g)].map((match) => match[1]);
    assert.deepEqual(order.slice(0, 2), ['architecture', 'quickstart']);
  });

  it('serves each pattern from examples/ when its file exists, and says so when it does not', async () => {
    for (const pattern of PATTERNS) {
      const file = `${EXAMPLES_DIR}${pattern}.ts`;
      const result = await call('get_integration_example', { pattern });
      if (existsSync(file)) {
        assert.equal(result.isError, undefined, pattern);
        assert.equal(textOf(result), readFileSync(file, 'utf8'), pattern);
      } else {
        assert.equal(result.isError, true, pattern);
        assert.match(textOf(result), /is not available on this server/, pattern);
      }
    }
  });

  it('searches the repository docs', async () => {
    const hits = JSON.parse(textOf(await call('search_herald_docs', { query: 'idempotency key', maxResults: 3 })));
    assert.ok(hits.length >= 1 && hits.length <= 3);
    assert.ok(repoPages().has(hits[0].slug));
  });

  it('search snippets quote header formats and names as the docs write them', async () => {
    const search = async (query: string) => JSON.parse(textOf(await call('search_herald_docs', { query }))) as { slug: string; snippet: string }[];
    const webhooks = repoPages().get('webhooks') ?? '';
    const header = /`x-service-signature: (t=<[^`]*>)`/.exec(webhooks)?.[1];
    assert.ok(header, 'docs/webhooks.md gives the signature header format');
    const signature = (await search('x-service-signature')).find((hit) => hit.slug === 'webhooks');
    assert.ok(signature?.snippet.includes(header), signature?.snippet);
    for (const name of ['HERALD_WEBHOOK_TIMEOUT_MS', 'HERALD_WEBHOOK_SECRET', 'whsec_']) {
      assert.ok([...repoPages().values()].some((text) => text.includes(name)), `the docs mention ${name}`);
      const hits = await search(name);
      assert.ok(
        hits.some((hit) => hit.snippet.includes(name)),
        `${name}: ${JSON.stringify(hits.map((hit) => hit.snippet))}`,
      );
    }
  });
});
