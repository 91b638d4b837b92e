import { INTEGRATION_PATTERNS, type DocsLibrary } from './load-docs-library.js';

export interface Endpoint {
  method: string;
  path: string;
  summary: string;
  tag: string;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Every operation of an OpenAPI document, in document order. */
export function listEndpoints(openapi: { paths?: Record<string, Record<string, any>> }): Endpoint[] {
  return Object.entries(openapi.paths ?? {}).flatMap(([path, operations]) =>
    METHODS.filter((method) => operations[method]).map((method) => ({
      method: method.toUpperCase(),
      path,
      summary: operations[method].summary ?? '',
      tag: operations[method].tags?.[0] ?? 'other',
    })),
  );
}

/** The opening comment of an example file: what it shows, in its author's words. */
export function exampleSummary(source: string): string {
  const text = source.replace(/^#!.*\n/, '').trimStart();
  const block = /^\/\*\*?([\s\S]*?)\*\//.exec(text)?.[1];
  const lines = block
    ? block.split('\n').map((line) => line.replace(/^\s*\*\s?/, ''))
    : (/^(?:[ \t]*\/\/.*\n?)+/.exec(text)?.[0] ?? '').split('\n').map((line) => line.replace(/^\s*\/\/\s?/, ''));
  const paragraph = lines.join('\n').trim().split(/\n\s*\n/)[0] ?? '';
  return paragraph.replace(/\s+/g, ' ').trim();
}

function endpointSection(endpoints: Endpoint[]): string {
  const byTag = new Map<string, Endpoint[]>();
  for (const endpoint of endpoints) byTag.set(endpoint.tag, [...(byTag.get(endpoint.tag) ?? []), endpoint]);
  const groups = [...byTag].map(
    ([tag, list]) => `### ${tag}\n\n${list.map((e) => `- \`${e.method} ${e.path}\`${e.summary ? ` — ${e.summary}` : ''}`).join('\n')}`,
  );
  return [
    '## API endpoints',
    'Generated from the route schemas; the full OpenAPI 3.1 document is at `GET /openapi.json` and a browsable reference at `GET /docs`.',
    ...groups,
  ].join('\n\n');
}

function exampleSection(library: DocsLibrary): string {
  const lines = INTEGRATION_PATTERNS.map((pattern) => {
    const example = library.examples.get(pattern);
    if (!example) return `- \`${pattern}\` — not available on this server`;
    const summary = exampleSummary(example.source);
    return `- \`${pattern}\` (\`examples/${example.fileName}\`)${summary ? ` — ${summary}` : ''}`;
  });
  return [
    '## Integration examples',
    'One runnable TypeScript file per pattern, exercised by the test suite against a live gateway. Fetch one with the `get_integration_example` tool (`{"pattern": "<name>"}`).',
    lines.join('\n'),
  ].join('\n\n');
}

/**
 * The whole service context in one markdown document: every documentation page in reading order
 * (but the text of those marked `context: false`), the endpoint list and the integration patterns.
 * Built from what is on disk, so it never lags the docs.
 */
export function assembleHeraldContext(library: DocsLibrary, endpoints: Endpoint[]): string {
  const contents = library.pages
    .map((page) => `- ${page.title} (\`${page.slug}\`)${page.inContext ? '' : ' — not included below; read it with `get_doc_page`'}`)
    .join('\n');
  const pages = library.pages.filter((page) => page.inContext).map((page) => `<!-- page: ${page.slug} -->\n\n${page.body.trim()}`);
  const header = [
    '# Herald service context',
    'Herald is a notification gateway for Solana wallets. This document assembles its documentation pages (a page listed as not included is read with `get_doc_page`; search them all with `search_herald_docs`), the list of API endpoints and the integration examples.',
    `## Pages\n\n${contents || '- (no documentation pages on this server)'}`,
  ].join('\n\n');
  return [header, ...pages, endpointSection(endpoints), exampleSection(library)].join('\n\n---\n\n') + '\n';
}
