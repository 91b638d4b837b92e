import MiniSearch from 'minisearch';
import type { DocPage } from './parse-doc-page.js';

export interface DocSearchHit {
  slug: string;
  title: string;
  /** The best matching section's text, trimmed around the first match. */
  snippet: string;
  /** MiniSearch relevance (BM25+ with the boosts below); only the order between hits means anything. */
  score: number;
}

interface SectionDocument {
  id: number;
  slug: string;
  title: string;
  heading: string;
  text: string;
}

export type SearchDocs = (query: string, maxResults: number) => DocSearchHit[];

const SNIPPET_BEFORE = 80;
const SNIPPET_LENGTH = 240;

/** Plain text for a snippet: fences, table rules, link targets and emphasis are noise in one line of text. */
function flatten(markdown: string): string {
  return markdown
    .replace(/^[ \t]*(```|~~~).*$/gm, '')
    .replace(/^[ \t]*\|?[ \t:|-]*-{3,}[ \t:|-]*$/gm, '')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[*_`|>#]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

export function snippetAround(text: string, terms: string[]): string {
  const flat = flatten(text);
  const lower = flat.toLowerCase();
  const positions = terms.map((term) => lower.indexOf(term.toLowerCase())).filter((index) => index >= 0);
  const hit = positions.length ? Math.min(...positions) : 0;
  let start = Math.max(0, hit - SNIPPET_BEFORE);
  if (start > 0) {
    const space = flat.indexOf(' ', start);
    start = space === -1 || space > hit ? start : space + 1;
  }
  let end = Math.min(flat.length, start + SNIPPET_LENGTH);
  if (end < flat.length) {
    const space = flat.lastIndexOf(' ', end);
    end = space > hit ? space : end;
  }
  return `${start > 0 ? '…' : ''}${flat.slice(start, end)}${end < flat.length ? '…' : ''}`;
}

/**
 * Indexes every section of every page once. Titles weigh most, then headings, then text; terms
 * match by prefix and with a little fuzziness, so "webhok" and "idempot" still find their pages.
 * A page appears once in the results, scored by its best section.
 */
export function buildDocsSearch(pages: DocPage[]): SearchDocs {
  const index = new MiniSearch<SectionDocument>({
    fields: ['title', 'heading', 'text'],
    storeFields: ['slug', 'title', 'text'],
    searchOptions: { boost: { title: 3, heading: 2 }, prefix: true, fuzzy: 0.2 },
  });
  let id = 0;
  index.addAll(pages.flatMap((page) => page.sections.map((section) => ({ id: id++, slug: page.slug, title: page.title, ...section }))));

  return (query, maxResults) => {
    const hits: DocSearchHit[] = [];
    const seen = new Set<string>();
    for (const result of index.search(query)) {
      if (seen.has(result.slug)) continue;
      seen.add(result.slug);
      hits.push({
        slug: result.slug,
        title: result.title,
        snippet: snippetAround(result.text, [...result.terms, ...result.queryTerms]),
        score: Math.round(result.score * 1000) / 1000,
      });
      if (hits.length === maxResults) break;
    }
    return hits;
  };
}
