/**
 * Runs a file of examples/ the way its opening comment tells a user to: `node --import tsx
 * examples/<name>.ts` from the repository root, settings in the environment, `herald` on the PATH
 * from node_modules/.bin. The child gets a clean environment (nothing from the developer's shell)
 * and a scratch config directory, so a real ~/.config/herald is never read.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../cli/run-cli.js';
import { sleep } from '../support/gateway.js';

export interface ExampleRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as one JSON document. */
  json(): any;
  /** stdout parsed as one JSON document per line. */
  lines(): any[];
}

/** The environment every example gets, before its own settings. */
export function baseEnv(home: string, config: string): Record<string, string> {
  return { PATH: `${path.join(ROOT, 'node_modules/.bin')}${path.delimiter}${process.env.PATH ?? ''}`, HOME: home, XDG_CONFIG_HOME: config };
}

function startExample(name: string, env: Record<string, string>, args: string[]): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', path.join('examples', `${name}.ts`), ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
}

function parseJson(text: string, what: string): any {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${what} is not JSON: ${JSON.stringify(text)}`);
  }
}

/** Runs an example to completion. */
export function runExample(name: string, env: Record<string, string>, args: string[] = [], timeoutMs = 60_000): Promise<ExampleRun> {
  return new Promise((resolve, reject) => {
    const child = startExample(name, env, args);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({
        code,
        stdout,
        stderr,
        json: () => parseJson(stdout, `stdout of ${name}`),
        lines: () => stdout.split('\n').filter(Boolean).map((line) => parseJson(line, `a stdout line of ${name}`)),
      });
    });
  });
}

/**
 * Calls an example's exported `main(env, args)` in this process, capturing what it prints: the
 * same result as a child run, without a process start (used for the many bad-path runs).
 */
export async function callMain(name: string, env: Record<string, string>, args: string[] = []): Promise<ExampleRun> {
  const module = (await import(pathToFileURL(path.join(ROOT, 'examples', `${name}.ts`)).href)) as { main(env: NodeJS.ProcessEnv, args?: string[]): Promise<number> };
  let stdout = '';
  let stderr = '';
  const { log, error } = console;
  console.log = (...values: unknown[]) => void (stdout += `${values.join(' ')}\n`);
  console.error = (...values: unknown[]) => void (stderr += `${values.join(' ')}\n`);
  let code: number;
  try {
    code = await module.main(env, args);
  } finally {
    Object.assign(console, { log, error });
  }
  return {
    code,
    stdout,
    stderr,
    json: () => parseJson(stdout, `stdout of ${name}`),
    lines: () => stdout.split('\n').filter(Boolean).map((line) => parseJson(line, `a stdout line of ${name}`)),
  };
}

/** A long-running example (a server): its stdout lines as they come, and a way to stop it. */
export interface RunningExample {
  lines: any[];
  stderr(): string;
  /** Resolves with the first line (parsed) matching `predicate`. */
  waitForLine(predicate: (line: any) => boolean, timeoutMs?: number): Promise<any>;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function startLongRunning(name: string, env: Record<string, string>): RunningExample {
  const child = startExample(name, env, []);
  const lines: any[] = [];
  let pending = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    const complete = pending.split('\n');
    pending = complete.pop()!;
    for (const line of complete.filter(Boolean)) lines.push(parseJson(line, `a stdout line of ${name}`));
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    lines,
    stderr: () => stderr,
    async waitForLine(predicate, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const line = lines.find(predicate);
        if (line) return line;
        if (child.exitCode !== null) throw new Error(`${name} exited ${child.exitCode}: ${stderr}`);
        if (Date.now() > deadline) throw new Error(`${name} printed no matching line within ${timeoutMs} ms: ${JSON.stringify(lines)} ${stderr}`);
        await sleep(20);
      }
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}
