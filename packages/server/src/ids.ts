import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';

/**
 * Random bytes for ULIDs, drawn from the CSPRNG 4 KB at a time: ulid's own generator asks the
 * CSPRNG for one byte per character, which cost more than everything else an id does.
 */
const pool = new Uint8Array(4096);
let used = pool.length;
function pooledRandom(): number {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  return pool[used++] / 256;
}

const next = monotonicFactory(pooledRandom);

/** Time-ordered ids; a notification id is the bare ULID, other resources carry a prefix. */
export const newId = {
  notification: () => next(),
  protocol: () => `proto_${next()}`,
  apiKey: () => `key_${next()}`,
  schedule: () => `sched_${next()}`,
  webhook: () => `wh_${next()}`,
  webhookDelivery: () => `whd_${next()}`,
  event: () => `evt_${next()}`,
  template: () => `tmpl_${next()}`,
  broadcast: () => `bcast_${next()}`,
  capture: () => `msg_${next()}`,
  receiptBatch: () => `rbat_${next()}`,
};
