import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
// The SDK itself imports zod this way (zod/v4): one zod instance, schemas it can convert to JSON Schema.
import * as z from 'zod/v4';
import { assembleHeraldContext, listEndpoints } from './assemble-herald-context.js';
import { INTEGRATION_PATTERNS, type DocsLibrary, type IntegrationPattern } from './load-docs-library.js';
import { buildDocsSearch } from './search-docs.js';

/** One MCP tool: its argument schema (strict: unknown arguments are refused) and what it answers. */
export interface HeraldTool {
  name: string;
  title: string;
  description: string;
  input: z.ZodObject;
  run(args: any): CallToolResult;
}

function text(value: string): CallToolResult {
  return { content: [{ type: 'text', text: value }] };
}

function toolError(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

/** Typed at the definition, stored untyped in the table the server dispatches from. */
function defineTool<S extends z.ZodObject>(tool: { name: string; title: string; description: string; input: S; run(args: z.output<S>): CallToolResult }): HeraldTool {
  return tool;
}

/**
 * The four documentation tools. Everything they serve is prepared here, once: the search index
 * now, the assembled context on first use (it lists the endpoints, known only once every route is
 * registered).
 */
export function buildHeraldTools(library: DocsLibrary, openapi: () => { paths?: Record<string, Record<string, any>> }): HeraldTool[] {
  const search = buildDocsSearch(library.pages);
  let context: string | undefined;
  const slugs = library.pages.map((page) => page.slug);
  const onlyListed = library.pages.filter((page) => !page.inContext).map((page) => page.slug);
  const available = INTEGRATION_PATTERNS.filter((pattern) => library.examples.has(pattern));
  const pagesBySlug = new Map(library.pages.map((page) => [page.slug, page]));

  return [
    defineTool({
      name: 'get_herald_context',
      title: 'Herald service context',
      description:
        `The whole Herald context in one markdown document: architecture, API, SDK, CLI and the documentation pages${onlyListed.length ? ` (${onlyListed.join(', ')} only listed: read with get_doc_page)` : ''}, the endpoint list, and the integration patterns. Start here.`,
      input: z.strictObject({}),
      run: () => text((context ??= assembleHeraldContext(library, listEndpoints(openapi())))),
    }),
    defineTool({
      name: 'search_herald_docs',
      title: 'Search the Herald documentation',
      description:
        'Ranked full-text search of the documentation (prefix and typo tolerant). Answers a JSON array of {slug, title, snippet, score}, best first; read a whole page with get_doc_page.',
      input: z.strictObject({
        query: z.string().trim().min(1, 'must hold at least one word, not only spaces').max(500).describe('Words to look for, e.g. "webhook signature"'),
        maxResults: z.number().int().min(1).max(20).default(5).describe('How many pages to answer, 1 to 20 (default 5)'),
      }),
      run: ({ query, maxResults }) => text(JSON.stringify(search(query, maxResults))),
    }),
    defineTool({
      name: 'get_integration_example',
      title: 'Integration example',
      description: `A runnable TypeScript example for one integration pattern, tested against a live gateway. Patterns: ${available.join(', ') || 'none'}.`,
      input: z.strictObject({ pattern: z.string().describe(`One of: ${available.join(', ') || 'none'}`) }),
      run: ({ pattern }) => {
        if (!(INTEGRATION_PATTERNS as readonly string[]).includes(pattern)) {
          return toolError(`Unknown pattern "${pattern}". Valid patterns: ${INTEGRATION_PATTERNS.join(', ')}`);
        }
        const example = library.examples.get(pattern as IntegrationPattern);
        if (!example) {
          return toolError(`The ${pattern} example is not available on this server. Available: ${available.join(', ') || 'none'}`);
        }
        return text(example.source);
      },
    }),
    defineTool({
      name: 'get_doc_page',
      title: 'Documentation page',
      description: `One documentation page, as markdown. Slugs: ${slugs.join(', ') || 'none'}.`,
      input: z.strictObject({ slug: z.string().describe(`One of: ${slugs.join(', ') || 'none'}`) }),
      run: ({ slug }) => {
        const page = pagesBySlug.get(slug);
        if (!page) return toolError(`Unknown slug "${slug}". Valid slugs: ${slugs.join(', ') || 'none'}`);
        return text(page.body);
      },
    }),
  ];
}
