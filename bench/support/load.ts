/**
 * Runs autocannon in a child process, so the load generator never shares the server's event loop.
 * On a 2-core machine it still shares the CPUs: every case (the bare route included) pays that
 * cost alike, which is why figures are compared as ratios within one run.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { AutocannonRequest } from 'autocannon';

export interface LoadSpec {
  /** Origin of the server, e.g. http://127.0.0.1:3000. */
  url: string;
  /** Every connection cycles through these, each starting at a different offset. */
  requests: AutocannonRequest[];
  connections: number;
  durationSec: number;
  /** Load of the same shape, discarded, run just before the measured one. */
  warmupSec: number;
  pipelining?: number;
  /** Replaces `[<id>]` in bodies with a fresh id per request (idempotency keys, unique fields). */
  idReplacement?: boolean;
}

export interface LoadResult {
  connections: number;
  durationSec: number;
  /** Mean of the per-second request counts. */
  requestsPerSec: number;
  total: number;
  /** Responses received during the warm-up. */
  warmupTotal: number;
  latencyMeanMs: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
}

const CHILD = fileURLToPath(new URL('./load-child.ts', import.meta.url));

/** `onMeasureStart` is called as the measured part (after the warm-up) begins. */
export function runLoad(spec: LoadSpec, onMeasureStart: () => void = () => {}): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    // Only tsx is passed on: a --cpu-prof given to the benchmark profiles the server, not the load.
    const child = fork(CHILD, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let settled = false;
    const finish = (error: Error | undefined, result?: LoadResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(guard);
      if (error) reject(error);
      else resolve(result!);
    };
    // autocannon stops on its own after the duration; this only catches a wedged child.
    const guard = setTimeout(
      () => {
        child.kill('SIGKILL');
        finish(new Error('the load generator did not finish in time'));
      },
      (spec.warmupSec + spec.durationSec + 60) * 1000,
    );
    child.on('message', (message: { measuring?: boolean; result?: LoadResult; error?: string }) => {
      if (message.measuring) onMeasureStart();
      else if (message.error) finish(new Error(`load generator: ${message.error}`));
      else finish(undefined, message.result);
    });
    child.on('error', (error) => finish(error));
    child.on('exit', (code) => finish(new Error(`the load generator exited (code ${code}) without a result`)));
    child.send(spec);
  });
}

/** The same request once per API key, so load spreads evenly over protocols (and their rate limits). */
export function keyedRequests(keys: string[], request: AutocannonRequest): AutocannonRequest[] {
  return keys.map((key) => ({ ...request, headers: { ...request.headers, authorization: `Bearer ${key}` } }));
}
