/**
 * `npm run bench -- <name> [options]` runs bench/<name>.ts; with no name, lists the benchmarks.
 * Every benchmark module exports `main(args: string[]): Promise<void>` and starts with a doc
 * comment whose first line describes it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

function available(): { name: string; summary: string }[] {
  return readdirSync(here)
    .filter((file) => file.endsWith('.ts') && file !== 'run.ts' && !file.endsWith('.d.ts'))
    .sort()
    .map((file) => {
      const doc = /\/\*\*\s*\n?\s*\*?\s*(.+)/.exec(readFileSync(path.join(here, file), 'utf8'));
      return { name: file.slice(0, -3), summary: doc ? doc[1].replace(/\s*\*\/$/, '') : '' };
    });
}

async function main() {
  const [name, ...args] = process.argv.slice(2);
  const benches = available();
  if (!name || name === '--help') {
    process.stdout.write('usage: npm run bench -- <name> [--help | options]\n\n');
    for (const bench of benches) process.stdout.write(`  ${bench.name.padEnd(14)} ${bench.summary}\n`);
    return;
  }
  if (!benches.some((bench) => bench.name === name)) {
    process.stderr.write(`unknown benchmark "${name}"; available: ${benches.map((b) => b.name).join(', ')}\n`);
    process.exitCode = 1;
    return;
  }
  const module = (await import(pathToFileURL(path.join(here, `${name}.ts`)).href)) as { main(args: string[]): Promise<void> };
  await module.main(args);
}

// Exiting explicitly: a benchmark is over once it has printed, whatever handles a library left open.
main().then(
  () => process.exit(process.exitCode ?? 0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
