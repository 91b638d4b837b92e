import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every .ts file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

describe('source hygiene', () => {
  // The gateway logs through pino (structured, secrets redacted); the CLI and SDK write through
  // their own outputs. A console call there is a debugging line left behind. (Tests may print from
  // the child scripts they run.)
  it('has no console calls in the packages', () => {
    const files = ['server', 'sdk', 'cli'].flatMap((name) => sources(path.join(ROOT, 'packages', name, 'src')));
    const found = files.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        // Usage examples in doc comments (` * @example …`) may print; code may not.
        .flatMap((line, i) =>
          /\bconsole\.(log|debug|info|warn|error|trace|dir)\(/.test(line) && !/^\s*(\*|\/\/)/.test(line) ? [`${path.relative(ROOT, file)}:${i + 1}: ${line.trim()}`] : [],
        ),
    );
    assert.deepEqual(found, []);
  });
});
