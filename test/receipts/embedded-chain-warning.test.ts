import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { onPostgres, startGateway } from '../support/gateway.js';
import { logLines } from '../support/log-lines.js';

const WARNING = /^live receipts are written to the in-process litesvm chain, which ends with this process: set SOLANA_RPC_URL and HERALD_RECEIPT_KEYPAIR/;

/** The warning lines a gateway logs as it starts with the given roles' settings. */
async function startupWarnings(env: Record<string, string>): Promise<string[]> {
  const log = logLines();
  const gw = await startGateway({ logger: pino({ level: 'warn' }, log.stream), env });
  await gw.close();
  return log.records().map((line) => line.msg);
}

describe('receipts on the in-process chain', () => {
  it(
    onPostgres
      ? 'warns, on PostgreSQL, that live receipts go to the chain in the process when no cluster is set'
      : 'does not warn on the embedded default, where the chain in the process is the point',
    async () => {
      const warned = (await startupWarnings({})).filter((msg) => WARNING.test(msg));
      assert.equal(warned.length, onPostgres ? 1 : 0, JSON.stringify(warned));
    },
  );

  it('does not warn in a process that writes no receipts (the api role)', async () => {
    assert.deepEqual((await startupWarnings({ HERALD_ROLE: 'api' })).filter((msg) => WARNING.test(msg)), []);
  });
});
