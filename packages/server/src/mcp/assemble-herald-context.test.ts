import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assembleHeraldContext, exampleSummary, listEndpoints } from './assemble-herald-context.js';
import { orderPages } from './load-docs-library.js';
import { parseDocPage } from './parse-doc-page.js';

describe('exampleSummary', () => {
  it('takes the first paragraph of an opening block comment', () => {
    const source = '/**\n * Sends one notification from a backend.\n * Run it with tsx.\n *\n * Details that are not the summary.\n */\nimport x from "y";';
    assert.equal(exampleSummary(source), 'Sends one notification from a backend. Run it with tsx.');
  });

  it('takes opening line comments, after a shebang', () => {
    assert.equal(exampleSummary('#!/usr/bin/env node\n// Sends from a script.\n// Second line.\n\nconst a = 1;'), 'Sends from a script. Second line.');
  });

  it('answers nothing when the file opens with code', () => {
    assert.equal(exampleSummary('const a = 1; // not a summary'), '');
  });
});

describe('listEndpoints', () => {
  it('lists every operation with its first tag and summary', () => {
    const endpoints = listEndpoints({
      paths: {
        '/v1/a': { get: { tags: ['x'], summary: 'Read' }, post: { summary: 'Write' }, parameters: [] },
        '/v1/b/{id}': { delete: { tags: ['y', 'z'] } },
      },
    });
    assert.deepEqual(endpoints, [
      { method: 'GET', path: '/v1/a', summary: 'Read', tag: 'x' },
      { method: 'POST', path: '/v1/a', summary: 'Write', tag: 'other' },
      { method: 'DELETE', path: '/v1/b/{id}', summary: '', tag: 'y' },
    ]);
  });
});

describe('orderPages and assembleHeraldContext', () => {
  const pages = orderPages([
    parseDocPage('zeta.md', '---\nslug: zeta\ntitle: Zeta\n---\nZeta body'),
    parseDocPage('errors.md', '---\nslug: errors\ntitle: Errors\n---\nErrors body'),
    parseDocPage('alpha.md', '---\nslug: alpha\ntitle: Alpha\n---\nAlpha body'),
    parseDocPage('quickstart.md', '---\nslug: quickstart\ntitle: Quickstart\n---\nQuickstart body'),
  ]);

  it('puts known pages in reading order, then the others alphabetically', () => {
    assert.deepEqual(
      pages.map((page) => page.slug),
      ['quickstart', 'errors', 'alpha', 'zeta'],
    );
  });

  it('concatenates the pages in that order, then the endpoints and every pattern', () => {
    const context = assembleHeraldContext(
      { pages, examples: new Map([['webhook', { pattern: 'webhook', fileName: 'webhook.ts', source: '// Verifies webhook signatures.\n' }]]) },
      [{ method: 'POST', path: '/v1/notify', summary: 'Queue one notification', tag: 'notifications' }],
    );
    const positions = ['Quickstart body', 'Errors body', 'Alpha body', 'Zeta body', '## API endpoints', '## Integration examples'].map((text) =>
      context.indexOf(text),
    );
    assert.ok(positions.every((position, i) => position > (positions[i - 1] ?? 0)), `out of order: ${positions}`);
    assert.match(context, /- `POST \/v1\/notify` — Queue one notification/);
    assert.match(context, /- `webhook` \(`examples\/webhook\.ts`\) — Verifies webhook signatures\./);
    assert.match(context, /- `backend` — not available on this server/);
  });

  it('lists a page marked `context: false` without its text', () => {
    const record = parseDocPage('figures.md', '---\nslug: figures\ntitle: Figures\ncontext: false\n---\n# Figures\n\nFigures body');
    assert.equal(record.inContext, false);
    assert.equal(pages[0].inContext, true);
    const context = assembleHeraldContext({ pages: [...pages, record], examples: new Map() }, []);
    assert.match(context, /- Figures \(`figures`\) — not included below; read it with `get_doc_page`/);
    assert.ok(!context.includes('Figures body'));
    assert.ok(!context.includes('<!-- page: figures -->'));
    assert.ok(context.includes('Zeta body'));
  });
});
