/** The load generator's process: receives one LoadSpec, runs warm-up then measurement, reports. */
import autocannon, { type AutocannonClient } from 'autocannon';
import type { LoadResult, LoadSpec } from './load.js';

async function measure(spec: LoadSpec, durationSec: number) {
  let nextOffset = 0;
  // Rotating each connection's sequence spreads concurrent requests over all keys from the first ms.
  // (autocannon refuses to change a pipelining client's requests: those all start at the first.)
  const setupClient = (client: AutocannonClient) => {
    if ((spec.pipelining ?? 1) > 1) return;
    const offset = nextOffset++ % spec.requests.length;
    const rotated = [...spec.requests.slice(offset), ...spec.requests.slice(0, offset)];
    client.setRequests(rotated.map((request) => ({ ...request })));
  };
  return autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: durationSec,
    pipelining: spec.pipelining ?? 1,
    timeout: 10,
    requests: spec.requests,
    idReplacement: spec.idReplacement ?? false,
    setupClient,
  });
}

async function run(spec: LoadSpec): Promise<LoadResult> {
  const warmup = spec.warmupSec > 0 ? await measure(spec, spec.warmupSec) : undefined;
  process.send!({ measuring: true });
  const result = await measure(spec, spec.durationSec);
  const statusCodes: Record<string, number> = {};
  for (const [status, { count }] of Object.entries(result.statusCodeStats ?? {})) statusCodes[status] = Number(count);
  return {
    connections: spec.connections,
    durationSec: result.duration,
    requestsPerSec: result.requests.average,
    total: result.requests.total,
    warmupTotal: warmup?.requests.total ?? 0,
    latencyMeanMs: result.latency.average,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodes,
  };
}

process.once('message', (spec: LoadSpec) => {
  run(spec).then(
    (result) => process.send!({ result }, () => process.exit(0)),
    (error: unknown) => process.send!({ error: error instanceof Error ? error.message : String(error) }, () => process.exit(1)),
  );
});
