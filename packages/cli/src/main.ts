#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { EXIT } from './exit-codes.js';
import { run } from './run.js';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

// Ctrl-C while a request is in flight is a cancellation, which has its own exit code.
process.once('SIGINT', () => {
  process.stderr.write('\nCancelled\n');
  process.exit(EXIT.usage);
});

// `herald notify list | head` closes the pipe early: stop quietly, as other Unix tools do.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(EXIT.ok);
});

process.exitCode = await run(process.argv.slice(2), { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env, version });
