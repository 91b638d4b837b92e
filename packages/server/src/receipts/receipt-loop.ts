import type { Deps } from '../deps.js';
import { JobLoop } from '../jobs/loop.js';
import { circuitArtifacts, loadVerificationKey } from './circuit-artifacts.js';
import { closeBatches } from './close-batches.js';
import { commitLeaves } from './commit-leaves.js';
import { proveReceipts } from './prove-receipts.js';
import type { ReceiptChain } from './receipt-chain.js';
import { ReceiptCrypto } from './receipt-crypto.js';
import { saveVerificationKey } from './receipt-store.js';
import type { ReceiptWork } from './receipt-work.js';
import { writeBatchMemos } from './write-batch-memos.js';

/** Stopping the loop also ends the prover process and closes the chains. */
class ReceiptLoop extends JobLoop {
  constructor(
    private readonly work: ReceiptWork,
    pass: () => Promise<number>,
    idleMs: number,
  ) {
    super({ name: 'receipts', log: work.log, idleMs, pass });
  }

  override async stop(): Promise<void> {
    this.work.stopping.abort();
    await super.stop();
    await Promise.all([...this.work.writes.production, ...this.work.writes.sandbox]);
    await this.work.crypto.close();
    await Promise.all([...new Set(Object.values(this.work.chains))].map((chain) => chain.close()));
  }
}

/** A chain whose module (and @solana/kit, litesvm) loads on the first write: most gateways never write one. */
function lazyChain(cluster: string, load: () => Promise<ReceiptChain>): ReceiptChain {
  let chain: Promise<ReceiptChain> | undefined;
  const open = () => (chain ??= load());
  return {
    cluster,
    signer: async () => (await open()).signer(),
    writeMemo: async (memo, options) => (await open()).writeMemo(memo, options),
    close: async () => {
      if (chain) await (await chain.catch(() => undefined))?.close();
    },
  };
}

function chainsFor(config: Deps['config']['receipts']): Record<'production' | 'sandbox', ReceiptChain> {
  const embedded = lazyChain('litesvm', async () => new (await import('./litesvm-chain.js')).LiteSvmChain(config.rpcUrl ? undefined : config.keypair));
  if (!config.rpcUrl) return { production: embedded, sandbox: embedded };
  const options = { url: config.rpcUrl, secretKey: config.keypair!, cluster: config.cluster, confirmTimeoutMs: config.confirmTimeoutMs };
  return { production: lazyChain(config.cluster, async () => new (await import('./rpc-chain.js')).RpcChain(options)), sandbox: embedded };
}

/**
 * On-chain receipts, one pass at a time: leaves for delivered notifications, batches with their
 * Merkle roots, one memo per batch, then proofs (a time slice per pass). Wakes on the `receipts`
 * topic and polls, so a partial batch closes within about HERALD_RECEIPT_BATCH_MS.
 */
export function receiptLoop(deps: Deps): JobLoop {
  const config = deps.config.receipts;
  const artifacts = circuitArtifacts(config);
  const work: ReceiptWork = {
    db: deps.db,
    log: deps.log,
    now: deps.now,
    config,
    crypto: new ReceiptCrypto(artifacts),
    chains: chainsFor(config),
    verificationKey: loadVerificationKey(artifacts.verificationKey),
    writes: { production: new Set(), sandbox: new Set() },
    written: () => loop.wake(),
    stopping: new AbortController(),
  };
  // On PostgreSQL a deployment is meant to last: receipts on a chain that ends with the process
  // would read as confirmed while their transactions are gone after a restart.
  if (deps.config.databaseUrl && !config.rpcUrl) {
    deps.log.warn(
      'live receipts are written to the in-process litesvm chain, which ends with this process: set SOLANA_RPC_URL and HERALD_RECEIPT_KEYPAIR to write them to a Solana cluster',
    );
  }
  if (config.rpcUrl && !config.zkeyPath) {
    deps.log.warn('receipts written to a cluster are proven with the development trusted setup: set HERALD_RECEIPT_ZKEY and HERALD_RECEIPT_VKEY');
  }
  let keySaved = false;
  // Configured (ceremony) keys are checked before any receipt moves; the shipped pair matches by
  // construction, and checking it would start the prover in every gateway.
  let keysChecked: Promise<void> | undefined;
  const pass = async () => {
    if (config.zkeyPath) {
      keysChecked ??= work.crypto.checkKeys().catch((error: Error) => {
        // A mismatch stays refused until the configuration changes; anything else is tried again.
        if (!/does not belong/.test(error.message)) keysChecked = undefined;
        throw error;
      });
      await keysChecked;
    }
    if (!keySaved) {
      await saveVerificationKey(deps.db, work.verificationKey);
      keySaved = true;
    }
    const committed = await commitLeaves(work);
    const closed = await closeBatches(work);
    const written = await writeBatchMemos(work);
    const proven = await proveReceipts(work, { sliceMs: 2000, parallel: 2, stopping: () => work.stopping.signal.aborted });
    if (proven) deps.wakeup.notify('webhooks');
    return committed + closed + written + proven;
  };
  const loop = new ReceiptLoop(work, pass, Math.min(1000, config.batchMs));
  deps.wakeup.on('receipts', () => loop.wake());
  return loop;
}
