import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseDocPage, type DocPage } from './parse-doc-page.js';

/** The integration patterns of the contract, each served from `examples/<pattern>.ts`. */
export const INTEGRATION_PATTERNS = [
  'backend',
  'serverless',
  'webhook',
  'batch',
  'registration-check',
  'broadcast',
  'subscribe',
  'cli-send',
  'cli-agent',
] as const;

export type IntegrationPattern = (typeof INTEGRATION_PATTERNS)[number];

export interface IntegrationExample {
  pattern: IntegrationPattern;
  fileName: string;
  source: string;
}

/** What the MCP endpoint serves, read once at start-up. */
export interface DocsLibrary {
  /** In reading order (see orderPages). */
  pages: DocPage[];
  /** Only the patterns whose file exists. */
  examples: Map<IntegrationPattern, IntegrationExample>;
}

/**
 * Reading order of the assembled context: a newcomer's path first (what it is, how to start, how
 * to send), then the reference. Pages not listed follow in alphabetical order, so a new page is
 * served without touching this list.
 */
const READING_ORDER = [
  'architecture',
  'quickstart',
  'authentication',
  'notifications',
  'idempotency',
  'errors',
  'limits',
  'identities',
  'subscriptions',
  'broadcast',
  'schedules',
  'templates',
  'webhooks',
  'delivery',
  'receipts',
  'sandbox',
  'reporting',
  'sdk',
  'cli',
  'self-hosting',
  'reliability',
  'mcp',
  'performance',
];

export function orderPages(pages: DocPage[]): DocPage[] {
  const rank = (slug: string) => {
    const index = READING_ORDER.indexOf(slug);
    return index === -1 ? READING_ORDER.length : index;
  };
  return [...pages].sort((a, b) => rank(a.slug) - rank(b.slug) || a.slug.localeCompare(b.slug));
}

/** Names in `dir`, or none when it does not exist (a deployment may ship without docs). */
async function listDir(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

async function readPages(docsDir: string): Promise<DocPage[]> {
  const names = (await listDir(docsDir)).filter((name) => name.toLowerCase().endsWith('.md')).sort();
  const pages = await Promise.all(names.map(async (name) => parseDocPage(name, await readFile(path.join(docsDir, name), 'utf8'))));
  const seen = new Set<string>();
  // Two files claiming one slug: the first in file-name order wins, so the answer is stable.
  return pages.filter((page) => !seen.has(page.slug) && seen.add(page.slug));
}

async function readExamples(examplesDir: string): Promise<Map<IntegrationPattern, IntegrationExample>> {
  const names = new Set(await listDir(examplesDir));
  const examples = new Map<IntegrationPattern, IntegrationExample>();
  for (const pattern of INTEGRATION_PATTERNS) {
    const fileName = `${pattern}.ts`;
    if (!names.has(fileName)) continue;
    examples.set(pattern, { pattern, fileName, source: await readFile(path.join(examplesDir, fileName), 'utf8') });
  }
  return examples;
}

export async function loadDocsLibrary(docsDir: string, examplesDir: string): Promise<DocsLibrary> {
  const [pages, examples] = await Promise.all([readPages(docsDir), readExamples(examplesDir)]);
  return { pages: orderPages(pages), examples };
}
