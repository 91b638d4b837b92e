import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Files the prover needs; the wasm and its loader come from the repository, the keys may be a ceremony's. */
export interface CircuitArtifacts {
  /** The compiled circuit (gzip of circom's wasm). */
  wasmGz: string;
  /** circom's generated loader for that wasm (CommonJS). */
  witnessCalculator: string;
  /** Groth16 proving key. */
  zkey: string;
  /** Groth16 verification key (snarkjs JSON). */
  verificationKey: string;
}

const BUILD = new URL('../../circuits/build/', import.meta.url);
const shipped = (name: string) => fileURLToPath(new URL(name, BUILD));

/**
 * The shipped artifacts, with the proving and verification keys replaced by configured ones
 * (HERALD_RECEIPT_ZKEY / HERALD_RECEIPT_VKEY: a ceremony's output for this same circuit).
 */
export function circuitArtifacts(keys: { zkeyPath?: string; vkeyPath?: string } = {}): CircuitArtifacts {
  return {
    wasmGz: shipped('receipt.wasm.gz'),
    witnessCalculator: shipped('witness_calculator.cjs'),
    zkey: keys.zkeyPath ?? shipped('receipt.zkey'),
    verificationKey: keys.vkeyPath ?? shipped('verification_key.json'),
  };
}

export interface VerificationKey {
  /** sha256 (hex) of the key's JSON: names it in the database, so old receipts keep their key. */
  id: string;
  key: Record<string, unknown>;
}

/** commitment (the circuit's output), root, notificationId, walletHi, walletLo. */
export const PUBLIC_SIGNALS = 5;

export function loadVerificationKey(file: string): VerificationKey {
  const key = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  if (key.protocol !== 'groth16' || key.nPublic !== PUBLIC_SIGNALS) throw new Error(`${file} is not a Groth16 verification key with ${PUBLIC_SIGNALS} public signals`);
  return { id: createHash('sha256').update(JSON.stringify(key)).digest('hex'), key };
}
