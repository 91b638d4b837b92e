import MiniSearch, { type SearchResult } from 'minisearch';
import { FENCE, type DocPage } from './parse-doc-page.js';

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
  inContext: boolean;
}

export type SearchDocs = (query: string, maxResults: number) => DocSearchHit[];

const SNIPPET_BEFORE = 80;
const SNIPPET_LENGTH = 240;

const TABLE_RULE = /^[ \t]*\|?[ \t:|-]*-{3,}[ \t:|-]*$/;
const CODE_SPAN = /(`+)[\s\S]*?[^`]\1(?!`)/g;

/**
 * Prose without the markdown that is not content: link targets, emphasis markers, table pipes and
 * escapes go; code spans stay whole, backticks included, so what is quoted can be copied exactly.
 * `_` is emphasis only at a word's edge: HERALD_WEBHOOK_SECRET keeps its underscores.
 */
function plainProse(prose: string): string {
  const spans: string[] = [];
  // Inside a table, GFM reads `\|` in a code span as a literal pipe.
  const held = prose.replace(CODE_SPAN, (span) => `\u0000${spans.push(span.replace(/\\\|/g, '|')) - 1}\u0000`);
  return held
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/(\*{1,3})(?=\S)([\s\S]*?\S)\1/g, '$2')
    .replace(/(?<!\w)(_{1,3})(?=\S)([\s\S]*?\S)\1(?!\w)/g, '$2')
    .replace(/(?<!\\)\|/g, ' ')
    .replace(/\\([\\`*_[\]|<>#])/g, '$1')
    .replace(/\u0000(\d+)\u0000/g, (_, index: string) => spans[Number(index)]);
}

/**
 * One line of text for a snippet. Fence lines, table rules and quote marks go; code blocks are kept
 * as written (a `#` or `|` there is code), prose loses only its markdown decoration.
 */
function flatten(markdown: string): string {
  const parts: string[] = [];
  let prose: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split(/\r?\n/)) {
    const fenceMark = FENCE.exec(line)?.[1];
    if (fenceMark && fence === undefined) {
      parts.push(plainProse(prose.join('\n')));
      prose = [];
      fence = fenceMark;
    } else if (fenceMark && fence === fenceMark) {
      fence = undefined;
    } else if (fence !== undefined) {
      parts.push(line);
    } else if (!TABLE_RULE.test(line)) {
      prose.push(line.replace(/^[ \t]*(>[ \t]?)+/, ''));
    }
  }
  parts.push(plainProse(prose.join('\n')));
  return parts.join(' ').replace(/\s+/g, ' ').trim();
}

/**
 * The section's text around the query as written (`HERALD_WEBHOOK_SECRET`, `x-service-signature`)
 * when it appears whole, else around the earliest of the terms it matched by.
 */
export function snippetAround(text: string, terms: string[], query = ''): string {
  const flat = flatten(text);
  const lower = flat.toLowerCase();
  const whole = query.trim() ? lower.indexOf(query.trim().toLowerCase()) : -1;
  const positions = terms.map((term) => lower.indexOf(term.toLowerCase())).filter((index) => index >= 0);
  const hit = whole >= 0 ? whole : positions.length ? Math.min(...positions) : 0;
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
 * A word as indexed and searched: lower case, and a plural's final `s` dropped (not `ss`), so a
 * typo in "webhooks" or "receipts" is one edit from the word the pages use in both numbers.
 */
export function searchTerm(term: string): string {
  const lower = term.toLowerCase();
  return lower.length > 3 && lower.endsWith('s') && !lower.endsWith('ss') ? lower.slice(0, -1) : lower;
}

/** The most distinct words of a query that are searched; further words are left out. */
export const MAX_QUERY_TERMS = 12;
/** Shorter words match whole words only: as a prefix, one or two letters would match most of the index. */
const MIN_PREFIX_LENGTH = 3;

/** A page kept out of the assembled context (the benchmark record) weighs this much: the guides come first. */
const RECORD_WEIGHT = 0.25;
/**
 * A page's score: its best section's, plus this much of each of its next OTHER_SECTIONS_COUNTED
 * matching sections: a page about the subject outranks one that mentions it once, and a long page
 * of passing mentions does not outrank either.
 */
const OTHER_SECTIONS_WEIGHT = 0.25;
const OTHER_SECTIONS_COUNTED = 3;
/** A word with a digit (a status code, `p99`) matches only itself: as a prefix or with a typo, 429 would find 428 and 4290. */
const HAS_DIGIT = /\d/;

const tokenize = MiniSearch.getDefault('tokenize') as (text: string) => string[];

/**
 * A query's distinct words as searched, in order, at most MAX_QUERY_TERMS: a word repeated is
 * searched once, so a query's cost grows with what it asks, not with how long it is.
 */
export function queryTerms(query: string): string[] {
  const terms = new Set<string>();
  for (const token of tokenize(query)) {
    if (!token) continue;
    terms.add(searchTerm(token));
    if (terms.size === MAX_QUERY_TERMS) break;
  }
  return [...terms];
}

/**
 * Indexes every section of every page once. Titles weigh most, then headings, then text; terms
 * match by prefix and with a little fuzziness, so "webhok" and "idempot" still find their pages.
 * A page appears once in the results, scored by its best section and a part of its others, with
 * its snippet from the best.
 */
export function buildDocsSearch(pages: DocPage[]): SearchDocs {
  const index = new MiniSearch<SectionDocument>({
    fields: ['title', 'heading', 'text'],
    storeFields: ['slug', 'title', 'text', 'inContext'],
    processTerm: searchTerm,
    // At most two typos a word: more would let one long made-up word match, and cost, far more.
    searchOptions: {
      boost: { title: 3, heading: 2 },
      prefix: (term) => term.length >= MIN_PREFIX_LENGTH && !HAS_DIGIT.test(term),
      fuzzy: (term) => (HAS_DIGIT.test(term) ? false : 0.2),
      maxFuzzy: 2,
      boostDocument: (_id, _term, stored) => (stored?.inContext === false ? RECORD_WEIGHT : 1),
    },
  });
  let id = 0;
  index.addAll(pages.flatMap((page) => page.sections.map((section) => ({ id: id++, slug: page.slug, title: page.title, inContext: page.inContext, ...section }))));

  return (query, maxResults) => {
    // Results come best first: a page's first result is its best section.
    const byPage = new Map<string, { best: SearchResult; score: number; others: number }>();
    for (const result of index.search(queryTerms(query).join(' '))) {
      const page = byPage.get(result.slug);
      if (!page) byPage.set(result.slug, { best: result, score: result.score, others: 0 });
      else if (page.others++ < OTHER_SECTIONS_COUNTED) page.score += result.score * OTHER_SECTIONS_WEIGHT;
    }
    return [...byPage.values()]
      .sort((a, b) => b.score - a.score)
      .slice(0, maxResults)
      .map(({ best, score }) => ({
        slug: best.slug,
        title: best.title,
        snippet: snippetAround(best.text, [...best.terms, ...best.queryTerms], query),
        score: Math.round(score * 1000) / 1000,
      }));
  };
}
