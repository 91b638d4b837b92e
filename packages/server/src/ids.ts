import { monotonicFactory } from 'ulid';

const next = monotonicFactory();

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
