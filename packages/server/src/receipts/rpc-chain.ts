import {
  createDefaultRpcTransport,
  createKeyPairSignerFromBytes,
  createSolanaRpcFromTransport,
  getSolanaErrorFromJsonRpcError,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_NODE_UNHEALTHY,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE,
  type KeyPairSigner,
  type RpcTransport,
  type Signature,
} from '@solana/kit';
import { setTimeout as sleep } from 'node:timers/promises';
import { signMemoTransaction } from './memo-transaction.js';
import { MemoStillPending, type ReceiptChain, type SentMemo, type WriteMemoOptions } from './receipt-chain.js';

export interface RpcChainOptions {
  url: string;
  /** 64 bytes, Solana CLI format (secret seed then public key). */
  secretKey: Uint8Array;
  cluster: string;
  /** How long one attempt may take, waiting for `confirmed` and every call to the node included. */
  confirmTimeoutMs: number;
  pollMs?: number;
}

const describe = (value: unknown) => JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? v.toString() : v));
/** A node's answer in an error message, cut short: a proxy's error page can be kilobytes long. */
const excerpt = (value: unknown) => {
  const text = describe(value) ?? String(value);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
};

/**
 * JSON-RPC errors with which a node refuses a transaction before passing it on to the cluster
 * (a failed preflight simulation or signature check, or a node that is behind): it cannot land.
 * Any other failure, a timeout or an internal error, leaves it possibly on its way.
 */
const REFUSED_BEFORE_FORWARDING = new Set<number>([
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_NODE_UNHEALTHY,
]);
const refusedBeforeForwarding = (error: unknown) => error instanceof NodeRpcError && REFUSED_BEFORE_FORWARDING.has(error.code);

/** A JSON-RPC error a node answered, in its own words; @solana/kit's reading of it, where it has one, is the cause. */
class NodeRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    cause: unknown,
  ) {
    super(message, { cause });
  }
}

/**
 * The JSON-RPC transport to `url`. An error answer becomes a NodeRpcError naming the node's own
 * code and message, which stands as a receipt's failure reason. Kit's own message would be a
 * template whose placeholders the node's `data` may not fill ("behind by $numSlotsBehind slots"),
 * or under NODE_ENV=production only a code to decode; and on codes it does not know (-32000,
 * -32429, which rate-limiting and overloaded nodes answer), or a -32002 without `data`, it fails
 * with a TypeError of its own.
 */
function transportTo(url: string): RpcTransport {
  const transport = createDefaultRpcTransport({ url });
  return async <TResponse>(request: Parameters<RpcTransport>[0]): Promise<TResponse> => {
    // Something other than a Solana node at the URL (a proxy's error page, another service) would
    // otherwise fail as a parser's or a property read's TypeError, standing as the failure reason.
    const response = await transport<TResponse>(request).catch((error: unknown) => {
      throw error instanceof SyntaxError ? new Error(`the node's answer is not JSON (${error.message})`) : error;
    });
    if (typeof response !== 'object' || response === null || !('result' in response || 'error' in response)) {
      throw new Error(`the node's answer is not a JSON-RPC response: ${excerpt(response)}`);
    }
    const error = (response as { error?: unknown }).error;
    if (error !== undefined) {
      let cause: unknown;
      try {
        cause = getSolanaErrorFromJsonRpcError(error);
      } catch {
        // A code kit does not know: the node's words alone.
      }
      const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
      const text = `the node answered JSON-RPC error ${String(code)}: ${typeof message === 'string' ? message : describe(error)}`;
      throw new NodeRpcError(Number(code), text, cause);
    }
    return response;
  };
}

/** What became of a transaction handed to the node. */
type Outcome = { landed: string } | { gone: string };

/**
 * A Solana cluster through its JSON-RPC API (@solana/kit): send with preflight, then poll the
 * signature until `confirmed`, failing when the transaction errs, its blockhash expires or the
 * timeout passes. Polling needs no WebSocket endpoint, which many RPC providers meter separately.
 *
 * An attempt, every call to the node included, ends within `confirmTimeoutMs`: a node that stops
 * answering holds up its own batch, not the gateway's other work. A transaction is recorded
 * (`record`) before it goes out, and the next attempt follows it before sending another, so a
 * memo that landed although the node answered an error, or was confirmed after the attempt gave
 * up, is not written twice.
 */
export class RpcChain implements ReceiptChain {
  readonly cluster: string;
  private readonly rpc: ReturnType<typeof createSolanaRpcFromTransport>;
  private payer: Promise<KeyPairSigner> | undefined;

  constructor(private readonly options: RpcChainOptions) {
    this.cluster = options.cluster;
    this.rpc = createSolanaRpcFromTransport(transportTo(options.url));
  }

  async signer(): Promise<string> {
    return (await this.keyPair()).address;
  }

  async writeMemo(memo: string, { earlier, record, sendNew = true, signal }: WriteMemoOptions = {}): Promise<string> {
    const timeout = AbortSignal.timeout(this.options.confirmTimeoutMs);
    const abortSignal = signal ? AbortSignal.any([timeout, signal]) : timeout;
    let following = earlier;
    try {
      if (earlier) {
        const outcome = await this.follow(earlier, abortSignal);
        if ('landed' in outcome) return outcome.landed;
        if (!sendNew) throw new Error(outcome.gone);
        following = undefined;
      }
      if (!sendNew) throw new Error('there is no transaction to follow');
      const payer = await this.keyPair();
      const latest = await this.rpc.getLatestBlockhash({ commitment: 'confirmed' }).send({ abortSignal });
      const lifetime = latest?.value;
      if (typeof lifetime?.blockhash !== 'string' || lifetime.lastValidBlockHeight === undefined) {
        throw new Error(`the node answered getLatestBlockhash without a blockhash: ${excerpt(latest)}`);
      }
      const transaction = await signMemoTransaction(payer, memo, lifetime);
      const sent = { signature: getSignatureFromTransaction(transaction), lastValidBlockHeight: lifetime.lastValidBlockHeight };
      await record?.(sent);
      following = sent;
      try {
        await this.rpc
          .sendTransaction(getBase64EncodedWireTransaction(transaction), { encoding: 'base64', preflightCommitment: 'confirmed' })
          .send({ abortSignal });
      } catch (error) {
        if (refusedBeforeForwarding(error)) await record?.(null);
        throw error;
      }
      const outcome = await this.follow(sent, abortSignal);
      if ('gone' in outcome) throw new Error(outcome.gone);
      return outcome.landed;
    } catch (error) {
      if (!timeout.aborted || signal?.aborted) throw error;
      const waited = `within ${this.options.confirmTimeoutMs} ms`;
      if (following) throw new MemoStillPending(`transaction ${following.signature} not confirmed ${waited}`);
      throw new Error(`the node did not answer ${waited}`);
    }
  }

  /**
   * Polls a transaction until it is confirmed or can no longer land: it failed, or its blockhash
   * expired with no trace of it (looked for once more right after the expiry was seen, as it may
   * have landed in the last valid block).
   */
  private async follow(sent: SentMemo, abortSignal: AbortSignal): Promise<Outcome> {
    const { signature, lastValidBlockHeight } = sent;
    let expired = false;
    for (;;) {
      const status = await this.status(signature, abortSignal);
      if (status?.err) return { gone: `transaction ${signature} failed: ${describe(status.err)}` };
      if (status?.confirmationStatus === 'confirmed' || status?.confirmationStatus === 'finalized') return { landed: signature };
      if (!status) {
        if (expired) return { gone: `transaction ${signature} expired before it was confirmed` };
        expired = (await this.rpc.getBlockHeight({ commitment: 'confirmed' }).send({ abortSignal })) > lastValidBlockHeight;
        if (expired) continue;
      }
      await sleep(this.options.pollMs ?? 400, undefined, { signal: abortSignal });
    }
  }

  private async status(signature: string, abortSignal: AbortSignal) {
    const answer = await this.rpc.getSignatureStatuses([signature as Signature], { searchTransactionHistory: true }).send({ abortSignal });
    const statuses: unknown = answer?.value;
    if (!Array.isArray(statuses)) throw new Error(`the node answered getSignatureStatuses without a list of statuses: ${excerpt(answer)}`);
    return statuses[0] as (typeof answer.value)[number];
  }

  async close(): Promise<void> {}

  private keyPair(): Promise<KeyPairSigner> {
    this.payer ??= createKeyPairSignerFromBytes(this.options.secretKey);
    return this.payer;
  }
}
