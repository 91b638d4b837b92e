#!/usr/bin/env node
// Runs every test file with Node's test runner (TypeScript through tsx), in parallel.
// Test files: test/**/*.test.ts (integration, real server) and packages/*/src/**/*.test.ts (pure logic).
// Arguments narrow the run to files whose path contains any of them: `npm test -- webhooks`.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

function collect(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) collect(full, out);
    else if (name.endsWith('.test.ts')) out.push(path.relative(root, full));
  }
  return out;
}

const filters = process.argv.slice(2);
const files = [...collect(path.join(root, 'test')), ...collect(path.join(root, 'packages'))]
  .filter((file) => filters.length === 0 || filters.some((f) => file.includes(f)))
  .sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}

const concurrency = process.env.HERALD_TEST_CONCURRENCY ?? String(Math.max(2, availableParallelism() + 1));
// A file counts as one test for the timeout, every test in it included: the Solana cluster file
// runs close to 3 minutes on a slow machine, so the limit that reports a hang is 7.
const TIMEOUT_MS = 420_000;
const engine = process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite';
console.log(`Running ${files.length} test files on ${engine}${process.env.REDIS_URL ? ' + Redis' : ''}, ${concurrency} at a time`);
const child = spawn(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, `--test-timeout=${TIMEOUT_MS}`, ...files],
  { cwd: root, stdio: 'inherit' },
);
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
