#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { EXIT } from './exit-codes.js';
import { interruption } from './interruption.js';
import { run } from './run.js';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

// Ctrl-C is a cancellation (exit 2), reported like any error, after what was already sent.
process.once('SIGINT', () => process.exit(interruption.cancel()));

// `herald notify list | head` closes the pipe early: stop quietly, as other Unix tools do.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(EXIT.ok);
});

process.exitCode = await run(process.argv.slice(2), { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env, version });
