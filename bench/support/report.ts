import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem, type } from 'node:os';
import type { LoadResult } from './load.js';

export interface CaseResult {
  name: string;
  result: LoadResult;
  /** Notifications (or other units) carried by one request, for bulk endpoints. */
  itemsPerRequest?: number;
  /** CPU time of the benchmark process (where the server runs) per answered request. */
  serverCpuMicrosPerRequest?: number;
  /** CPU time of the PostgreSQL server processes per answered request (10 ms resolution). */
  postgresCpuMicrosPerRequest?: number;
  /**
   * Share of the machine's CPU time the hypervisor gave to other guests while the case ran
   * (/proc/stat's steal), over every core; undefined where that cannot be read.
   */
  stealShare?: number;
  /** Responses over every round, warm-ups included (what the server really handled). */
  answeredAllRounds?: number;
  /** Requests/s as a share of the first case's (the baseline), median over rounds. */
  shareOfBaseline: number;
}

const fixed = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** 1, 5 and 15-minute load averages: on a shared machine, how much else was running. */
export function loadAverage(): string {
  return loadavg().map((l) => l.toFixed(2)).join(' ');
}

/** What the figures depend on, printed before them. */
export function machineFacts(): string {
  const cores = cpus();
  const load = loadAverage();
  return [
    `date: ${new Date().toISOString()}`,
    `machine: ${cores.length} cores (${cores[0]?.model ?? 'unknown'}), ${Math.round(totalmem() / 2 ** 30)} GiB, ${type()}`,
    `node: ${process.version}`,
    `load average at start: ${load}`,
  ].join('\n');
}

/** A markdown table, with each row's requests/s as a share of the baseline's. */
export function formatTable(rows: CaseResult[]): string {
  const withItems = rows.some((row) => row.itemsPerRequest);
  const header = ['case', 'connections', 'seconds', 'requests/s (mean)', ...(withItems ? ['items/s'] : []), 'p50 ms', 'p99 ms', 'errors', 'non-2xx', 'server CPU µs/req', 'PostgreSQL CPU µs/req', 'vs bare'];
  const lines = rows.map(({ name, result, itemsPerRequest, serverCpuMicrosPerRequest, postgresCpuMicrosPerRequest, shareOfBaseline }) => [
    name,
    String(result.connections),
    fixed(result.durationSec),
    fixed(result.requestsPerSec),
    ...(withItems ? [itemsPerRequest ? fixed(result.requestsPerSec * itemsPerRequest) : ''] : []),
    fixed(result.latencyP50Ms, 1),
    fixed(result.latencyP99Ms, 1),
    String(result.errors),
    String(result.non2xx),
    serverCpuMicrosPerRequest === undefined ? '' : fixed(serverCpuMicrosPerRequest, 1),
    postgresCpuMicrosPerRequest === undefined ? '' : fixed(postgresCpuMicrosPerRequest, 1),
    `${(100 * shareOfBaseline).toFixed(1)}%`,
  ]);
  const all = [header, ...lines];
  const widths = header.map((_, i) => Math.max(...all.map((line) => line[i].length)));
  const render = (line: string[]) => `| ${line.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : '-'.repeat(w + 1) + ':')).join('|')}|`;
  return [render(header), rule, ...lines.map(render)].join('\n');
}

/** Unexpected status codes and socket errors, so a rate limit or a failure cannot hide in a figure. */
export function describeFailures(rows: CaseResult[], expectedStatus: (number | undefined)[] = []): string[] {
  const notes: string[] = [];
  for (const [i, { name, result }] of rows.entries()) {
    const expected = (status: string) => (expectedStatus[i] ? status === String(expectedStatus[i]) : status.startsWith('2'));
    const bad = Object.entries(result.statusCodes).filter(([status]) => !expected(status));
    if (bad.length || result.errors) {
      notes.push(`${name}: ${bad.map(([s, n]) => `${n} × ${s}`).join(', ')}${result.errors ? ` ${result.errors} errors (${result.timeouts} timeouts)` : ''}`);
    }
  }
  return notes;
}

/**
 * CPU seconds used so far by the PostgreSQL server processes on this machine (Linux /proc), or
 * undefined where that cannot be read. Differences over a phase show what the database spent on
 * it; it includes every session, so a benchmark reads it while nothing else uses the server.
 */
export function postgresCpuSeconds(): number | undefined {
  try {
    const ticks = 100; // USER_HZ on Linux
    let total = 0;
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        if (name !== 'postgres') continue;
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        total += (Number(fields[11]) + Number(fields[12])) / ticks;
      } catch {
        // the process ended while being read
      }
    }
    return total;
  } catch {
    return undefined;
  }
}

/** The machine's CPU time so far, in ticks: all of it and the part stolen by the hypervisor (Linux /proc/stat). */
export function machineCpuTicks(): { total: number; steal: number } | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1, 9).map(Number);
    return { total: fields.reduce((sum, n) => sum + n, 0), steal: fields[7] };
  } catch {
    return undefined;
  }
}

/** Steal between two readings of machineCpuTicks, as a share of all CPU time between them. */
export function stealShareBetween(before: ReturnType<typeof machineCpuTicks>, after: ReturnType<typeof machineCpuTicks>): number | undefined {
  if (!before || !after || after.total <= before.total) return undefined;
  return (after.steal - before.steal) / (after.total - before.total);
}
