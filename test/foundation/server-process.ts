/**
 * Runs the built gateway (packages/server/dist/main.js) as a child process, the way an operator
 * starts it, for the tests that need a real process: exit codes, signals, the data-dir lock, and
 * several API processes sharing one database and one Redis.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const MAIN = path.join(ROOT, 'packages/server/dist/main.js');

/** `npm test` builds before testing; a lone `node --test` run may not have. */
export function ensureBuilt(): void {
  if (!existsSync(MAIN)) execFileSync('npx', ['tsc', '-b', 'packages/server'], { cwd: ROOT, stdio: 'inherit' });
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServerProcess {
  child: ChildProcess;
  pid: number;
  stdout(): string;
  stderr(): string;
  exited: Promise<Exit>;
  /** Resolves with the URL from the "herald listening" log line; rejects if the process exits first. */
  listening(timeoutMs?: number): Promise<string>;
  /** Sends the signal and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

const running = new Set<ChildProcess>();

/**
 * Starts main.js with exactly `env` (plus PATH), so the test runner's DATABASE_URL or REDIS_URL
 * never leak in unasked. LOG_LEVEL defaults to info: the listening line carries the bound URL,
 * which is how PORT=0 is learnt without racing for a free port.
 */
export function spawnServer(env: Record<string, string>): ServerProcess {
  const child = spawn(process.execPath, [MAIN], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<Exit>((resolve) => {
    child.on('exit', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    });
  });

  function listeningUrl(): string | undefined {
    for (const line of out.split('\n')) {
      if (!line.startsWith('{')) continue;
      const entry = JSON.parse(line) as { msg?: string; url?: string };
      if (entry.msg === 'herald listening' && entry.url) return entry.url;
    }
    return undefined;
  }

  return {
    child,
    pid: child.pid!,
    stdout: () => out,
    stderr: () => err,
    exited,
    listening(timeoutMs = 90_000) {
      return new Promise<string>((resolve, reject) => {
        const deadline = Date.now() + timeoutMs;
        const poll = setInterval(() => {
          const url = listeningUrl();
          if (url) {
            clearInterval(poll);
            resolve(url);
          } else if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
            clearInterval(poll);
            reject(new Error(`server did not start (exit ${child.exitCode ?? child.signalCode}):\n${out}\n${err}`));
          }
        }, 20);
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** For after() hooks: kills the children this file started that are still running. */
export async function killStrays(): Promise<void> {
  const left = [...running];
  for (const child of left) child.kill('SIGKILL');
  await Promise.all(left.map((child) => new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.on('exit', resolve)))));
}
