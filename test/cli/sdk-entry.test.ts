import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
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
});
