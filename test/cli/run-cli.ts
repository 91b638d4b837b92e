/**
 * Runs the built `herald` CLI as a child process, the way a user or a script does. The child gets
 * a clean environment (no HERALD_* from the developer's shell) and its own config dir, so a real
 * ~/.config/herald is never read or written.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
export const CLI = path.join(ROOT, 'packages/cli/dist/main.js');

/** `npm test` builds first; a file run on its own builds the SDK and CLI once if they are missing. */
export function ensureBuilt(): void {
  if (existsSync(CLI) && existsSync(path.join(ROOT, 'packages/sdk/dist/client.js'))) return;
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-b', 'packages/sdk', 'packages/cli'], { cwd: ROOT, stdio: 'inherit' });
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (throws with the output when it is not). */
  json(): any;
  /** stderr parsed as JSON, as --json mode reports errors. */
  errorJson(): any;
}

function parse(text: string, what: string): any {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${what} is not JSON: ${JSON.stringify(text)}`);
  }
}

export interface CliOptions {
  env?: Record<string, string | undefined>;
  input?: string;
  timeoutMs?: number;
  /** Program to run instead of dist/main.js (e.g. the bin launcher). */
  entry?: string;
  /** Called with the running CLI, e.g. to send it a signal once it is under way. */
  whileRunning?: (child: ChildProcess) => unknown;
}

/** A scratch HOME and XDG_CONFIG_HOME for one test file; removed by the returned cleanup. */
export function scratchHome(): { home: string; config: string; cleanup: () => void } {
  const home = mkdtempSync(path.join(tmpdir(), 'herald-cli-'));
  return { home, config: path.join(home, 'xdg'), cleanup: () => rmSync(home, { recursive: true, force: true }) };
}

export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '' };
  for (const [name, value] of Object.entries(options.env ?? {})) if (value !== undefined) env[name] = value;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [options.entry ?? CLI, ...args], { env, cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, json: () => parse(stdout, 'stdout'), errorJson: () => parse(stderr, 'stderr') });
    });
    child.stdin.end(options.input ?? '');
    Promise.resolve(options.whileRunning?.(child)).catch(reject);
  });
}

/** A loopback port with nothing listening on it. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** util-linux `script`, which gives a child a pseudo-terminal; tests needing one skip without it. */
export const hasScript = spawnSync('script', ['--version']).status === 0;

const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

/**
 * Runs the CLI on a pseudo-terminal (stdin, stdout and stderr all a TTY); when the screen shows
 * `waitFor`, types `keys`. The screen is everything the terminal displayed.
 */
export function onTerminal(args: string[], env: Record<string, string>, waitFor: string, keys: string): Promise<{ code: number | null; screen: string }> {
  const command = [process.execPath, CLI, ...args].map(quote).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], { env: { PATH: process.env.PATH ?? '', TERM: 'xterm', ...env } });
    let screen = '';
    let typed = false;
    child.stdout.on('data', (chunk) => {
      screen += chunk;
      if (!typed && screen.includes(waitFor)) {
        typed = true;
        child.stdin.write(keys);
      }
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, screen });
    });
  });
}
