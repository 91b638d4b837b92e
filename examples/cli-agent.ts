/**
 * An agent driving the CLI: check the setup with `herald doctor --json`, then work through a task
 * list — `wallet status`, `notify send`, `notify status` — with `--json` on every call, branching on
 * the exit codes: 2 bad input (drop the task), 3 not found, 4 auth (stop everything), 5 rate-limited
 * (wait, then repeat), 6 network (back off, then repeat or stop).
 *
 * - Every command prints exactly one JSON document on stdout (errors go to stderr as
 *   `{"error": {code, message, exitCode}}`), so nothing is scraped from human-readable text.
 * - Repeating a send is safe: each task's idempotency key (`agent:<task id>`) makes a repeat answer
 *   `duplicate` with the first notification's id, so the agent can retry after a network error
 *   without knowing whether the first attempt got through.
 * - The CLI already retries 429 and 5xx (honouring Retry-After) before exiting 5; the agent's own
 *   repeats are the slower, outer loop.
 * - A bad task (an invalid address, exit 2) is reported and skipped; an auth failure (exit 4) or a
 *   gateway that stays unreachable (exit 6) ends the run, since every later call would fail the same way.
 *
 * Run from the repository root (after `npm run build`):
 *   PATH="$PWD/node_modules/.bin:$PATH" HERALD_API_KEY=… HERALD_BASE_URL=… \
 *   node --import tsx examples/cli-agent.ts tasks.json
 * where tasks.json is `[{"id": "t1", "wallet": "<address>", "subject": "…", "body": "…"}, …]`
 * (without a file, one task to HERALD_WALLET). HERALD_CLI overrides the command. Prints the report
 * as JSON; exits 0 when every task was worked through (whatever each outcome), otherwise with the
 * CLI exit code that stopped the run.
 */
import { spawn } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';

/** The CLI's documented exit codes. */
export const EXIT = { ok: 0, error: 1, usage: 2, notFound: 3, auth: 4, rateLimited: 5, network: 6 } as const;

export interface Task {
  id: string;
  wallet: string;
  subject: string;
  body: string;
  category?: string;
}

export interface TaskResult {
  id: string;
  outcome: 'delivered' | 'not_delivered' | 'still_pending' | 'opted_out' | 'unreachable' | 'unregistered' | 'invalid' | 'failed';
  notificationId?: string;
  status?: string;
  detail?: string;
}

export interface AgentReport {
  ready: boolean;
  /** Set when the run stopped early, with the exit code that stopped it. */
  stopped?: { exitCode: number; reason: string };
  tasks: TaskResult[];
}

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

function runHerald(args: string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  const [command, ...prefix] = (env.HERALD_CLI ?? 'herald').trim().split(/\s+/);
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...prefix, ...args, '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

const errorOf = (run: CliRun): string => {
  try {
    const { code, message } = JSON.parse(run.stderr).error;
    return `${code}: ${message}`;
  } catch {
    return run.stderr.trim() || `exit code ${run.code}`;
  }
};

/** Runs a command, repeating it when rate-limited (5) or unreachable (6), with growing waits. */
async function runPatiently(args: string[], env: NodeJS.ProcessEnv, tries = 3): Promise<CliRun> {
  for (let attempt = 1; ; attempt++) {
    const run = await runHerald(args, env);
    if ((run.code !== EXIT.rateLimited && run.code !== EXIT.network) || attempt === tries) return run;
    await sleep(run.code === EXIT.rateLimited ? 1000 * attempt : 250 * 2 ** (attempt - 1));
  }
}

/** An outcome that ends the whole run: every later command would fail the same way. */
class Stop extends Error {
  constructor(
    readonly exitCode: number,
    reason: string,
  ) {
    super(reason);
  }
}

function stopOn(run: CliRun, what: string): void {
  if (run.code === EXIT.auth) throw new Stop(run.code, `${what}: the API key is missing or was refused (${errorOf(run)})`);
  if (run.code === EXIT.network) throw new Stop(run.code, `${what}: the gateway stayed unreachable (${errorOf(run)})`);
  if (run.code === EXIT.rateLimited) throw new Stop(run.code, `${what}: still rate-limited after waiting (${errorOf(run)})`);
}

const FINAL = new Set(['delivered', 'bounced', 'failed', 'opted_out']);

/** The notification's status once final (or as last read when `timeoutMs` ran out); an error's text when it cannot be read. */
async function followToFinal(id: string, env: NodeJS.ProcessEnv, timeoutMs = 30_000): Promise<{ status: string } | { error: string }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // Delivery takes a moment: reading at once would almost always find it still queued.
    await sleep(500);
    const run = await runPatiently(['notify', 'status', id], env);
    stopOn(run, 'notify status');
    if (run.code !== EXIT.ok) return { error: errorOf(run) };
    const { status } = JSON.parse(run.stdout);
    if (FINAL.has(status) || Date.now() > deadline) return { status };
  }
}

async function workOn(task: Task, env: NodeJS.ProcessEnv): Promise<TaskResult> {
  const lookup = await runPatiently(['wallet', 'status', task.wallet], env);
  stopOn(lookup, 'wallet status');
  if (lookup.code === EXIT.usage) return { id: task.id, outcome: 'invalid', detail: errorOf(lookup) };
  if (lookup.code !== EXIT.ok) return { id: task.id, outcome: 'failed', detail: errorOf(lookup) };
  if (!JSON.parse(lookup.stdout).registered) return { id: task.id, outcome: 'unregistered' };

  const send = await runPatiently([
    'notify', 'send', '--wallet', task.wallet, '--subject', task.subject, '--body', task.body,
    '--category', task.category ?? 'system', '--idempotency-key', `agent:${task.id}`,
  ], env);
  stopOn(send, 'notify send');
  if (send.code === EXIT.usage) return { id: task.id, outcome: 'invalid', detail: errorOf(send) };
  if (send.code === EXIT.notFound) return { id: task.id, outcome: 'unregistered', detail: errorOf(send) };
  if (send.code !== EXIT.ok) return { id: task.id, outcome: 'failed', detail: errorOf(send) };
  const submission = JSON.parse(send.stdout);
  const notificationId: string = submission.notificationId;
  if (submission.status === 'opted_out') return { id: task.id, outcome: 'opted_out', notificationId };
  if (submission.status === 'failed') return { id: task.id, outcome: 'unreachable', notificationId };

  const final = await followToFinal(notificationId, env);
  if ('error' in final) return { id: task.id, outcome: 'failed', notificationId, detail: final.error };
  const { status } = final;
  const outcome = status === 'delivered' ? 'delivered' : status === 'opted_out' ? 'opted_out' : FINAL.has(status) ? 'not_delivered' : 'still_pending';
  return { id: task.id, outcome, notificationId, status };
}

/** Checks the setup, then works through the tasks in order. */
export async function runAgent(tasks: Task[], env: NodeJS.ProcessEnv): Promise<{ report: AgentReport; exitCode: number }> {
  const report: AgentReport = { ready: false, tasks: [] };
  try {
    const doctor = await runPatiently(['doctor'], env);
    stopOn(doctor, 'doctor');
    // doctor prints its report on stdout even when a check failed: {ok, baseUrl, checks, errors}.
    if (doctor.code !== EXIT.ok) throw new Stop(doctor.code, `doctor: ${JSON.parse(doctor.stdout).errors.join('; ')}`);
    report.ready = true;
    for (const task of tasks) report.tasks.push(await workOn(task, env));
    return { report, exitCode: EXIT.ok };
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
    report.stopped = { exitCode: error.exitCode, reason: error.message };
    return { report, exitCode: error.exitCode };
  }
}

export async function main(env: NodeJS.ProcessEnv = process.env, args: string[] = process.argv.slice(2)): Promise<number> {
  let tasks: Task[];
  if (args[0]) tasks = JSON.parse(readFileSync(args[0], 'utf8'));
  else if (env.HERALD_WALLET) tasks = [{ id: 'task-1', wallet: env.HERALD_WALLET, subject: 'Rewards claimed', body: 'Your staking rewards were claimed and restaked.' }];
  else {
    console.error('Give a tasks file (a JSON array of {id, wallet, subject, body, category?}) or set HERALD_WALLET');
    return EXIT.usage;
  }
  const { report, exitCode } = await runAgent(tasks, env);
  console.log(JSON.stringify(report));
  if (report.stopped) console.error(`Stopped: ${report.stopped.reason}`);
  return exitCode;
}

if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  main().then(
    (code) => (process.exitCode = code),
    (error) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
