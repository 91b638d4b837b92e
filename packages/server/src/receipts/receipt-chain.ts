/** A memo transaction handed to a node: it may land until its blockhash expires. */
export interface SentMemo {
  signature: string;
  /** The last block height at which it can still land. */
  lastValidBlockHeight: bigint;
}

export interface WriteMemoOptions {
  /**
   * The transaction an earlier attempt handed to the node. It is followed first: if it landed,
   * its signature is the answer and nothing new is sent; a new transaction goes out only once
   * it can no longer land.
   */
  earlier?: SentMemo;
  /**
   * Called with a new transaction before it is sent, to record it (the next attempt's
   * `earlier`), and with null when the node refused it before passing it on (it cannot land).
   */
  record?: (sent: SentMemo | null) => Promise<void>;
  /** False: only follow `earlier`, and throw when it can no longer land. */
  sendNew?: boolean;
  /** Ends the attempt (the gateway is stopping). */
  signal?: AbortSignal;
}

/** An attempt ended while its transaction could still land: following it later may find it confirmed. */
export class MemoStillPending extends Error {}

/** Where batch roots are written: the in-process litesvm or a Solana cluster over JSON-RPC. */
export interface ReceiptChain {
  /** The label receipts carry (`litesvm`, `devnet`, `mainnet-beta`, …). */
  readonly cluster: string;
  /** The base58 address that signs and pays for every memo. */
  signer(): Promise<string>;
  /** Writes `memo` in one transaction; resolves with its signature once confirmed, throws otherwise. */
  writeMemo(memo: string, options?: WriteMemoOptions): Promise<string>;
  close(): Promise<void>;
}
