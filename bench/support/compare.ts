import type { AutocannonRequest } from 'autocannon';
import { runLoad, type LoadSpec } from './load.js';
import { describeFailures, formatTable, machineCpuTicks, postgresCpuSeconds, stealShareBetween, type CaseResult } from './report.js';

export interface BenchCase {
  name: string;
  /** Origin of the server under load. */
  url: string;
  requests: AutocannonRequest[];
  itemsPerRequest?: number;
  idReplacement?: boolean;
  /** The status every answer should have, when it is not a 2xx (a case measuring a refusal). */
  expectedStatus?: number;
}

export interface LoadShape {
  connections: number;
  durationSec: number;
  warmupSec: number;
  /** Each round runs every case once, in order; a case reports its median round and median share. */
  rounds: number;
  pipelining?: number;
}

/**
 * Runs the cases one after another under the same load shape; the first is the baseline. The
 * servers under test live in this process and only one is loaded at a time, so this process's CPU
 * time during a case, per answered request, is that server's cost per request (a figure other
 * processes on a shared machine disturb far less than requests/s). PostgreSQL's own processes are
 * not in it: their CPU time over the case is read from /proc and reported per request beside it.
 */
export async function compareCases(title: string, cases: BenchCase[], shape: LoadShape): Promise<CaseResult[]> {
  const runs: Omit<CaseResult, 'shareOfBaseline'>[][] = cases.map(() => []);
  for (let round = 1; round <= shape.rounds; round++) {
    for (const [i, c] of cases.entries()) {
      const roundNote = shape.rounds > 1 ? `round ${round}/${shape.rounds}, ` : '';
      process.stderr.write(`  ${title}: ${c.name} (${roundNote}${shape.warmupSec} s warm-up + ${shape.durationSec} s, ${shape.connections} connections)\n`);
      const spec: LoadSpec = { url: c.url, requests: c.requests, idReplacement: c.idReplacement, ...shape };
      let before = process.cpuUsage();
      let postgresBefore = postgresCpuSeconds();
      let machineBefore = machineCpuTicks();
      const result = await runLoad(spec, () => {
        before = process.cpuUsage();
        postgresBefore = postgresCpuSeconds();
        machineBefore = machineCpuTicks();
      });
      const cpu = process.cpuUsage(before);
      const postgresAfter = postgresCpuSeconds();
      const stealShare = stealShareBetween(machineBefore, machineCpuTicks());
      const perRequest = (micros: number) => (result.total ? micros / result.total : NaN);
      const serverCpuMicrosPerRequest = perRequest(cpu.user + cpu.system);
      const postgresCpuMicrosPerRequest = postgresBefore === undefined || postgresAfter === undefined ? undefined : perRequest((postgresAfter - postgresBefore) * 1e6);
      runs[i].push({ name: c.name, result, itemsPerRequest: c.itemsPerRequest, serverCpuMicrosPerRequest, postgresCpuMicrosPerRequest, stealShare });
    }
  }
  // Each round's ratio compares runs a few seconds apart, so a slow change in what else the
  // machine is doing moves both sides of it; the reported share is the median of those ratios.
  const rows = runs.map((caseRuns) => ({
    ...medianBy(caseRuns, (run) => run.result.requestsPerSec),
    shareOfBaseline: medianBy(
      caseRuns.map((run, round) => run.result.requestsPerSec / runs[0][round].result.requestsPerSec),
      (ratio) => ratio,
    ),
    answeredAllRounds: caseRuns.reduce((sum, run) => sum + run.result.total + run.result.warmupTotal, 0),
  }));
  process.stdout.write(`\n### ${title}\n\n${formatTable(rows)}\n`);
  // A virtual machine's slow spells show here: CPU time the hypervisor gave to other guests.
  const steal = runs.map((caseRuns, i) =>
    `${cases[i].name} ${caseRuns.map((run) => (run.stealShare === undefined ? '?' : `${(100 * run.stealShare).toFixed(1)}%`)).join(' / ')}`,
  );
  process.stdout.write(`\nCPU steal while each case ran (each round): ${steal.join('; ')}\n`);
  const failures = describeFailures(rows, cases.map((c) => c.expectedStatus));
  if (failures.length) process.stdout.write(`\nunexpected answers: ${failures.join('; ')}\n`);
  return rows;
}

function medianBy<T>(items: T[], value: (item: T) => number): T {
  const sorted = [...items].sort((a, b) => value(a) - value(b));
  return sorted[Math.floor((sorted.length - 1) / 2)];
}
