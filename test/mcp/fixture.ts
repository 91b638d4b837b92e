import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** A small docs/ and examples/ pair outside the repository, so answers are known in advance. */
export const FIXTURE_PAGES = {
  'quickstart.md': '---\nslug: quickstart\ntitle: Quickstart\n---\n\n# Quickstart\n\nCreate a protocol, then send your first notification.\n\n## Send\n\nCall `POST /v1/notify` with a wallet, a subject and a body.\n',
  // CRLF line ends, as an editor on Windows would save them.
  'webhooks.md':
    '---\r\nslug: webhooks\r\ntitle: Webhooks\r\n---\r\n\r\n# Webhooks\r\n\r\nHerald posts signed events.\r\n\r\n## Verifying signatures\r\n\r\nCompute an HMAC-SHA256 of the raw body and compare in constant time.\r\n',
  'zz-appendix.md': '# Appendix\n\nA page without front matter: its slug is its file name.\n',
  'notes.txt': 'not markdown: not served\n',
};

export const FIXTURE_EXAMPLES = {
  'backend.ts': '/**\n * Sends one notification from a backend service.\n */\nexport const pattern = "backend";\n',
  'webhook.ts': '// Verifies the signature of an incoming webhook.\nexport const pattern = "webhook";\n',
  'shared-helper.ts': 'export const notAPattern = true;\n',
};

export const FIXTURE_SLUGS = ['quickstart', 'webhooks', 'zz-appendix'];

export const PATTERNS = ['backend', 'serverless', 'webhook', 'batch', 'registration-check', 'broadcast', 'subscribe', 'cli-send', 'cli-agent'];

export async function writeFixture(): Promise<{ docsDir: string; examplesDir: string; remove: () => Promise<void> }> {
  const root = await mkdtemp(path.join(tmpdir(), 'herald-mcp-'));
  const docsDir = path.join(root, 'docs');
  const examplesDir = path.join(root, 'examples');
  await mkdir(docsDir);
  await mkdir(examplesDir);
  for (const [name, text] of Object.entries(FIXTURE_PAGES)) await writeFile(path.join(docsDir, name), text);
  for (const [name, text] of Object.entries(FIXTURE_EXAMPLES)) await writeFile(path.join(examplesDir, name), text);
  return { docsDir, examplesDir, remove: () => rm(root, { recursive: true, force: true }) };
}

/** The official SDK client over Streamable HTTP, initialized. */
export async function connectClient(url: string): Promise<Client> {
  const client = new Client({ name: 'herald-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url)));
  return client;
}

/** The text of a tool result's only content item. */
export function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text: string }[] }).content;
  if (content?.length !== 1 || content[0].type !== 'text') throw new Error(`expected one text item, got ${JSON.stringify(result)}`);
  return content[0].text;
}
