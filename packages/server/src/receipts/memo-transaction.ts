import { getAddMemoInstruction, LEGACY_MEMO_PROGRAM_ADDRESS_V3 } from '@solana-program/memo';
import {
  appendTransactionMessageInstruction,
  createTransactionMessage,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Blockhash,
  type KeyPairSigner,
} from '@solana/kit';

/**
 * SPL Memo v3, deployed on every public cluster and preloaded by litesvm. @solana-program/memo
 * defaults to a newer program id that litesvm does not load, so the address is always passed.
 */
export const MEMO_PROGRAM_ADDRESS = LEGACY_MEMO_PROGRAM_ADDRESS_V3;

/** One signed transaction holding one memo instruction, paid for and signed by `signer`. */
export async function signMemoTransaction(
  signer: KeyPairSigner,
  memo: string,
  lifetime: { blockhash: Blockhash; lastValidBlockHeight: bigint },
) {
  return pipe(
    createTransactionMessage({ version: 0 }),
    (message) => setTransactionMessageFeePayerSigner(signer, message),
    (message) => setTransactionMessageLifetimeUsingBlockhash(lifetime, message),
    (message) => appendTransactionMessageInstruction(getAddMemoInstruction({ memo }, { programAddress: MEMO_PROGRAM_ADDRESS }), message),
    (message) => signTransactionMessageWithSigners(message),
  );
}
