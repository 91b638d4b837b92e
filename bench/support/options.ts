import { parseArgs } from 'node:util';
import { ENGINES, type Engine } from './gateway.js';

export interface BenchOptions {
  engines: Engine[];
  durationSec: number;
  warmupSec: number;
  connections: number;
  protocols: number;
  rounds: number;
}

const USAGE = `options (or the BENCH_* variable in brackets):
  --engine LIST       comma-separated: ${ENGINES.join(', ')} [BENCH_ENGINES]
  --duration SEC      measured seconds per case [BENCH_DURATION]
  --warmup SEC        discarded warm-up seconds before each case [BENCH_WARMUP]
  --connections N     concurrent connections [BENCH_CONNECTIONS]
  --protocols N       Enterprise protocols the load is spread over [BENCH_PROTOCOLS]
  --rounds N          run every case N times, interleaved; report each case's median [BENCH_ROUNDS]`;

function whole(name: string, raw: string | undefined, fallback: number, min: number): number {
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min) throw new Error(`${name} must be a whole number >= ${min}, got "${raw}"\n${USAGE}`);
  return Number(raw);
}

/** A whole-number option of at least 1; anything else (or nothing) gives the fallback. */
export function atLeastOne(raw: string | undefined, fallback: number): number {
  return raw === undefined ? fallback : Math.max(1, Number.parseInt(raw, 10) || fallback);
}

/** Reads a benchmark's arguments; `defaults` are the benchmark's own choices. */
export function parseBenchOptions(args: string[], defaults: BenchOptions): BenchOptions {
  const { values } = parseArgs({
    args,
    options: {
      engine: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      protocols: { type: 'string' },
      rounds: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE + '\n');
    process.exit(0);
  }
  const env = process.env;
  const engineList = values.engine ?? env.BENCH_ENGINES;
  const engines = engineList ? engineList.split(',').map((e) => e.trim()) : defaults.engines;
  for (const engine of engines) {
    if (!(ENGINES as readonly string[]).includes(engine)) throw new Error(`unknown engine "${engine}"\n${USAGE}`);
  }
  return {
    engines: engines as Engine[],
    durationSec: whole('--duration', values.duration ?? env.BENCH_DURATION, defaults.durationSec, 1),
    warmupSec: whole('--warmup', values.warmup ?? env.BENCH_WARMUP, defaults.warmupSec, 0),
    connections: whole('--connections', values.connections ?? env.BENCH_CONNECTIONS, defaults.connections, 1),
    protocols: whole('--protocols', values.protocols ?? env.BENCH_PROTOCOLS, defaults.protocols, 1),
    rounds: whole('--rounds', values.rounds ?? env.BENCH_ROUNDS, defaults.rounds, 1),
  };
}
