/** Where batch roots are written: the in-process litesvm or a Solana cluster over JSON-RPC. */
export interface ReceiptChain {
  /** The label receipts carry (`litesvm`, `devnet`, `mainnet-beta`, …). */
  readonly cluster: string;
  /** The base58 address that signs and pays for every memo. */
  signer(): Promise<string>;
  /** Writes `memo` in one transaction; resolves with its signature once confirmed, throws otherwise. */
  writeMemo(memo: string): Promise<string>;
  close(): Promise<void>;
}
