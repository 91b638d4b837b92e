import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const dist = fileURLToPath(new URL('../../packages/sdk/dist/', import.meta.url));

/** The built files reachable from `file` through static imports and re-exports (dynamic import() excluded). */
function staticGraph(file: string, seen = new Map<string, string>()): Map<string, string> {
  if (seen.has(file)) return seen;
  const source = readFileSync(file, 'utf8');
  seen.set(file, source);
  for (const [, specifier] of source.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s*['"]([^'"]+)['"]/gm)) {
    if (specifier.startsWith('.')) staticGraph(path.resolve(path.dirname(file), specifier), seen);
  }
  return seen;
}

describe('@herald/sdk main entry', () => {
  it('statically imports no node: builtin, so it loads in a browser or a Worker', () => {
    const graph = staticGraph(path.join(dist, 'client.js'));
    assert.ok(graph.has(path.join(dist, 'webhooks.js')), 'the graph walk should reach webhooks.js');
    const offenders = [...graph]
      .filter(([, source]) => /^\s*(?:import|export)\b[^;]*?\bfrom\s*['"]node:|^\s*import\s*['"]node:/m.test(source))
      .map(([file]) => path.relative(dist, file));
    assert.deepEqual(offenders, []);
  });

  it('loads with require() from CommonJS code, each entry point (Node 20.19 and later require ES modules)', () => {
    const project = mkdtempSync(path.join(tmpdir(), 'herald-cjs-'));
    try {
      writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'cjs-user', private: true, type: 'commonjs' }));
      mkdirSync(path.join(project, 'node_modules', '@herald'), { recursive: true });
      symlinkSync(path.resolve(dist, '..'), path.join(project, 'node_modules', '@herald', 'sdk'), 'dir');
      writeFileSync(
        path.join(project, 'main.js'),
        `const { Herald, responseOf, verifyWebhookSignature } = require('@herald/sdk');
const webhooks = require('@herald/sdk/webhooks');
const receipts = require('@herald/sdk/receipts');
const herald = new Herald({ apiKey: 'hrld_test_x', baseUrl: 'http://127.0.0.1:9' });
console.log(JSON.stringify([typeof herald.notifications.send, typeof responseOf, typeof verifyWebhookSignature, typeof webhooks.verifyWebhookSignature, typeof receipts.verifyReceipt]));
`,
      );
      const printed = execFileSync(process.execPath, ['main.js'], { cwd: project, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      assert.deepEqual(JSON.parse(printed), ['function', 'function', 'function', 'function', 'function']);
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
});
