/**
 * Gateway processes for the reliability tests, in any role (`all`, `api`, `worker`), started from
 * the built main.js (test/foundation/server-process.ts), restartable, with every instance's output
 * kept so the logs of killed processes can still be scanned afterwards.
 */
import { spawnServer, type ServerProcess } from '../../foundation/server-process.js';
import { sleep } from '../../support/gateway.js';

export type Role = 'all' | 'api' | 'worker';

export interface Node {
  role: Role;
  /** The running instance (replaced on restart). */
  current: ServerProcess;
  /** The URL it listens on (every role but worker). */
  url?: string;
}

/** Parsed pino lines of a process's stdout; lines that are not JSON are skipped. */
export function logEntries(proc: ServerProcess): Array<Record<string, any>> {
  const entries: Array<Record<string, any>> = [];
  for (const line of proc.stdout().split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      entries.push(JSON.parse(line));
    } catch {
      // a line cut by a SIGKILL
    }
  }
  return entries;
}

/** Resolves once a log line with `msg` appears; rejects when the process exits or time runs out. */
export async function waitForLog(proc: ServerProcess, msg: string, timeoutMs = 60_000): Promise<Record<string, any>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const entry = logEntries(proc).find((e) => e.msg === msg);
    if (entry) return entry;
    if (proc.child.exitCode !== null || proc.child.signalCode !== null) {
      throw new Error(`process exited before logging "${msg}":\n${proc.stdout()}\n${proc.stderr()}`);
    }
    if (Date.now() > deadline) throw new Error(`no "${msg}" within ${timeoutMs} ms:\n${proc.stdout().slice(-4000)}`);
    await sleep(25);
  }
}

export function isAlive(proc: ServerProcess): boolean {
  return proc.child.exitCode === null && proc.child.signalCode === null;
}

export class Cluster {
  readonly nodes: Node[] = [];
  /** Every instance ever started, killed ones included, for the log scan. */
  readonly instances: ServerProcess[] = [];

  constructor(private readonly env: Record<string, string>) {}

  private spawn(role: Role, extra: Record<string, string> = {}): ServerProcess {
    const proc = spawnServer({ ...this.env, HERALD_ROLE: role, ...extra });
    this.instances.push(proc);
    return proc;
  }

  /** Starts a process of `role` and waits until it is ready (listening, or loops running). */
  async start(role: Role, extra: Record<string, string> = {}): Promise<Node> {
    const proc = this.spawn(role, extra);
    const node: Node = { role, current: proc };
    if (role !== 'worker') node.url = await proc.listening();
    else await waitForLog(proc, 'herald background loops running');
    this.nodes.push(node);
    return node;
  }

  get apis(): Node[] {
    return this.nodes.filter((n) => n.role !== 'worker');
  }

  get workers(): Node[] {
    return this.nodes.filter((n) => n.role === 'worker');
  }

  /** SIGKILLs a worker and starts a new one in its place; resolves when the new one runs. */
  async killAndRestart(node: Node): Promise<void> {
    node.current.child.kill('SIGKILL');
    await node.current.exited;
    node.current = this.spawn(node.role);
    await waitForLog(node.current, 'herald background loops running');
  }

  /** Every instance's stdout and stderr, in start order. */
  logs(): string {
    return this.instances.map((p) => `${p.stdout()}\n${p.stderr()}`).join('\n');
  }

  /** Stops every running process with SIGTERM (SIGKILL after `graceMs`). */
  async stop(graceMs = 10_000): Promise<void> {
    await Promise.all(
      this.nodes.map(async (node) => {
        if (!isAlive(node.current)) return;
        const timer = setTimeout(() => node.current.child.kill('SIGKILL'), graceMs);
        await node.current.stop('SIGTERM');
        clearTimeout(timer);
      }),
    );
  }
}
