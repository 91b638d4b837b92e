/**
 * Verifying Herald's on-chain delivery receipts (GET /v1/notifications/:id/receipt) without
 * trusting Herald. Standalone: Poseidon, base58 and the JSON-RPC call are written here; only the
 * Groth16 pairing check needs a library. Pass one as `groth16` (any object with snarkjs's
 * `verify(verificationKey, publicSignals, proof)`), or install `snarkjs` and it is imported on
 * first use.
 */

/** A receipt as the gateway answers it. */
export interface Receipt {
  notificationId: string;
  wallet: string;
  status: 'confirmed';
  /** The notification's leaf, 0x + 64 hex digits. */
  commitment: string;
  /** The batch's Merkle root, as written in the memo. */
  root: string;
  leafIndex: number;
  /** Sibling hashes from the leaf up to the root. */
  merklePath: string[];
  proof: { pi_a: string[]; pi_b: string[][]; pi_c: string[]; protocol: string; curve: string };
  /**
   * [commitment, root, notification id, wallet high 128 bits, wallet low 128 bits] as decimal
   * strings; receipts proven before the commitment was a signal have the last four only.
   */
  publicSignals: string[];
  /** Signature of the memo transaction. */
  tx: string;
  cluster: string;
  /** The gateway address that signed the memo transaction. */
  signer: string;
  batchId: string;
  memo: string;
  confirmedAt: string;
  verificationKey: Record<string, unknown>;
}

export interface Groth16Verifier {
  verify(verificationKey: object, publicSignals: string[], proof: object): Promise<boolean>;
}

export interface VerifyReceiptOptions {
  /** A Solana JSON-RPC endpoint of `receipt.cluster`: also check that the transaction carries the root. */
  rpcUrl?: string;
  /** The Groth16 verifier; by default `snarkjs.groth16`, imported on first use. */
  groth16?: Groth16Verifier;
  /**
   * The verification key the operator publishes. Without it the receipt's own key is used, which
   * proves consistency, not that the proof came from the operator's published circuit setup.
   */
  verificationKey?: object;
  /**
   * The operator's signing address: the receipt must name it (checked offline too), and with
   * `rpcUrl` the transaction must be signed by it. Without it the transaction is checked against
   * the receipt's own `signer`.
   */
  signer?: string;
  fetch?: typeof fetch;
  /** How long the RPC node has to answer `getTransaction`, body included (default 10 000 ms). */
  rpcTimeoutMs?: number;
}

const DEFAULT_RPC_TIMEOUT_MS = 10_000;

export interface ReceiptVerification {
  /** True only when every check that ran passed. */
  valid: boolean;
  checks: {
    /** The Groth16 proof verifies against the verification key and the public signals. */
    proof: boolean;
    /** The public signals are the receipt's commitment, root, notification id and wallet. */
    publicSignals: boolean;
    /** The commitment and path lead to the root. */
    merklePath: boolean;
    /** The transaction succeeded, was signed by the signer and its memo holds the root; null when offline. */
    onChain: boolean | null;
    /** The receipt's `signer` is the pinned `options.signer`; null when none is pinned. */
    signer: boolean | null;
  };
  /** Why each failed check failed. */
  errors: string[];
}

/** The BN254 scalar field of the circuit. */
const P = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;
const TREE_DEPTH = 10;
const MEMO_PROGRAMS = new Set(['MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr', 'Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo']);

/**
 * Checks a receipt: the Groth16 proof, that its public signals are this receipt's root,
 * notification id and wallet, the Merkle path from the commitment to the root, and, given
 * `rpcUrl`, that the memo transaction landed, was signed by the receipt's signer and names the
 * root, and that it names the pinned `signer`. Never throws for a bad receipt, not even for one
 * that is not an object (the answer says what failed); throws only when no Groth16 verifier is
 * available.
 *
 * What `valid` proves depends on what was checked. With `rpcUrl` and a pinned `signer`, it says
 * the operator's key put on chain a root under which this receipt's leaf commits to
 * `receipt.notificationId` and `receipt.wallet`: compare those two with the notification and
 * wallet you expect. Offline, or without a pinned signer, it says only that the receipt agrees
 * with itself: the proving key is public, so anyone can make such a receipt, and the signer a
 * receipt names is its own claim.
 */
export async function verifyReceipt(receipt: Receipt, options: VerifyReceiptOptions = {}): Promise<ReceiptVerification> {
  if (!receipt || typeof receipt !== 'object') {
    return { valid: false, checks: { proof: false, publicSignals: false, merklePath: false, onChain: null, signer: null }, errors: ['the receipt is not an object'] };
  }
  const errors: string[] = [];
  const check = (ok: boolean, why: string) => {
    if (!ok) errors.push(why);
    return ok;
  };
  const publicSignals = check(signalsMatch(receipt), "the public signals are not this receipt's commitment, root, notification id and wallet");
  const merklePath = check(pathLeadsToRoot(receipt), 'the Merkle path does not lead from the commitment to the root');
  const proof = check(await proofVerifies(receipt, options), 'the Groth16 proof does not verify');
  // Offline too: a receipt naming another signer than the operator's is not the operator's.
  const signer = options.signer === undefined ? null : check(receipt.signer === options.signer, `the receipt names signer ${receipt.signer}, not ${options.signer}`);
  let onChain: boolean | null = null;
  if (options.rpcUrl) {
    const problem = await memoProblem(receipt, options);
    onChain = check(problem === null, problem ?? '');
  }
  return { valid: errors.length === 0, checks: { proof, publicSignals, merklePath, onChain, signer }, errors };
}

function field(value: unknown): bigint | undefined {
  if (typeof value !== 'string' || !/^(0x[0-9a-fA-F]{1,64}|\d{1,78})$/.test(value)) return undefined;
  const parsed = BigInt(value);
  return parsed < P ? parsed : undefined;
}

/**
 * The proof's public signals are this receipt's: [commitment, root, notification id, wallet
 * limbs]. The commitment being a signal ties the receipt's leaf (and so its Merkle path) to the
 * proved notification: without it, another leaf of the same batch would pass the path check.
 * Receipts proven before it was a signal carry the last four only; for those, the path shows
 * that the commitment is in the batch, not that it is this notification's.
 */
function signalsMatch(r: Receipt): boolean {
  if (!Array.isArray(r.publicSignals) || (r.publicSignals.length !== 5 && r.publicSignals.length !== 4)) return false;
  const signals = r.publicSignals.map(field);
  const limbs = walletLimbs(r.wallet);
  const id = ulidValue(r.notificationId);
  if (signals.some((s) => s === undefined) || !limbs || id === undefined) return false;
  const [root, notification, hi, lo] = signals.slice(-4);
  const leaf = signals.length === 5 ? signals[0] === field(r.commitment) : true;
  return leaf && root === field(r.root) && notification === id && hi === limbs[0] && lo === limbs[1];
}

function pathLeadsToRoot(r: Receipt): boolean {
  const root = field(r.root);
  const leaf = field(r.commitment);
  const path = Array.isArray(r.merklePath) ? r.merklePath.map(field) : [];
  const index = r.leafIndex;
  if (root === undefined || leaf === undefined || path.length !== TREE_DEPTH || path.some((p) => p === undefined)) return false;
  if (!Number.isInteger(index) || index < 0 || index >= 2 ** TREE_DEPTH) return false;
  let node = leaf;
  path.forEach((sibling, d) => {
    node = (index >> d) & 1 ? poseidon2(sibling!, node) : poseidon2(node, sibling!);
  });
  return node === root;
}

async function proofVerifies(r: Receipt, options: VerifyReceiptOptions): Promise<boolean> {
  const key = options.verificationKey ?? r.verificationKey;
  if (!key || typeof key !== 'object' || !r.proof || typeof r.proof !== 'object' || !Array.isArray(r.publicSignals)) return false;
  const injected = options.groth16;
  if (injected) return Promise.resolve().then(() => injected.verify(key, r.publicSignals, r.proof)).catch(() => false);
  return withSnarkjs((groth16) => groth16.verify(key, r.publicSignals, r.proof).catch(() => false));
}

// snarkjs keeps a pool of worker threads (which keep a process alive) once it has verified
// anything: when the SDK loaded it, the pool is ended a moment after the last verification ends.
// The pool belongs to snarkjs's one bn128 curve, which it builds on first use and keeps; calls
// that start together would each build a curve and a pool of their own, and only the last would
// be kept (and ended). So the curve is built once, here, and every call waits for that one.
const LINGER_MS = 1000;
interface Curve {
  terminate(): Promise<void>;
}
let snarkjs: Promise<{ groth16: Groth16Verifier; curves: { getCurveFromName(name: string): Promise<Curve> } }> | undefined;
let curve: Promise<Curve> | undefined;
let running = 0;
let linger: ReturnType<typeof setTimeout> | undefined;

async function withSnarkjs(run: (groth16: Groth16Verifier) => Promise<boolean>): Promise<boolean> {
  const specifier = 'snarkjs';
  snarkjs ??= import(specifier).catch((error: Error) => {
    snarkjs = undefined;
    throw new Error(`verifyReceipt needs a Groth16 verifier: install snarkjs (npm install snarkjs) or pass { groth16 } (${error.message})`);
  });
  const lib = await snarkjs;
  clearTimeout(linger);
  running++;
  try {
    const built = (curve ??= lib.curves.getCurveFromName('bn128'));
    await built.catch(() => {
      if (curve === built) curve = undefined;
    });
    return await run(lib.groth16);
  } finally {
    if (--running === 0) {
      linger = setTimeout(() => {
        if (running !== 0 || !curve) return;
        const ending = curve;
        curve = undefined;
        ending.then((built) => built.terminate()).catch(() => {});
      }, LINGER_MS);
    }
  }
}

/** Null when the transaction checks out; otherwise why not. */
async function memoProblem(r: Receipt, options: VerifyReceiptOptions): Promise<string | null> {
  const answer = await askForTransaction(r, options);
  if ('problem' in answer) return answer.problem;
  if (answer.result === null) return `transaction ${r.tx} was not found on the cluster`;
  const tx = readTransaction(answer.result);
  if (typeof tx === 'string') return `the RPC node's answer for transaction ${r.tx} is malformed: ${tx}`;
  if (tx.failed) return `transaction ${r.tx} failed on chain`;
  const signer = options.signer ?? r.signer;
  if (tx.signer !== signer) return `transaction ${r.tx} was signed by ${tx.signer}, not ${signer}`;
  const root = field(r.root);
  const names = tx.memos.some((data) => {
    const memo = new TextDecoder().decode(base58Decode(data) ?? new Uint8Array());
    const match = /^herald:receipt:v1:[^:]+:(0x[0-9a-f]{64})$/.exec(memo);
    return match !== null && root !== undefined && BigInt(match[1]) === root;
  });
  return names ? null : `transaction ${r.tx} has no Herald memo naming root ${r.root}`;
}

/** The `result` of the node's `getTransaction` answer (null: no such transaction), or why there is none. */
async function askForTransaction(r: Receipt, options: VerifyReceiptOptions): Promise<{ result: unknown } | { problem: string }> {
  const timeoutMs = options.rpcTimeoutMs ?? DEFAULT_RPC_TIMEOUT_MS;
  let body: unknown;
  try {
    const response = await (options.fetch ?? fetch)(options.rpcUrl!, {
      // A node that never answers must not leave the verification pending: it fails this check.
      signal: AbortSignal.timeout(timeoutMs),
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'getTransaction',
        params: [r.tx, { encoding: 'json', commitment: 'confirmed', maxSupportedTransactionVersion: 0 }],
      }),
    });
    body = await response.json();
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') return { problem: `the RPC node did not answer within ${timeoutMs} ms` };
    return { problem: `the RPC node could not be asked: ${(error as Error).message}` };
  }
  if (!isRecord(body)) return { problem: 'the RPC node answered something other than a JSON-RPC response object' };
  if (body.error !== undefined && body.error !== null) {
    const message = isRecord(body.error) && typeof body.error.message === 'string' ? body.error.message : JSON.stringify(body.error);
    return { problem: `the RPC node answered an error: ${message}` };
  }
  if (body.result === undefined) return { problem: 'the RPC node answered neither a result nor an error' };
  return { result: body.result };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * What the check reads of a `getTransaction` result (encoding `json`): whether it failed, the fee
 * payer (the first account key, the signer) and the data of its memo-program instructions; or
 * which part of the result is malformed. Anything off is malformed: the answer is not trusted.
 */
function readTransaction(result: unknown): { failed: boolean; signer: string; memos: string[] } | string {
  if (!isRecord(result)) return 'result is not an object';
  if (!isRecord(result.meta)) return 'result.meta is not an object';
  // Null is success; a missing err says nothing about whether the transaction succeeded.
  if (!('err' in result.meta)) return 'result.meta.err is missing';
  const message = isRecord(result.transaction) ? result.transaction.message : undefined;
  if (!isRecord(message)) return 'result.transaction.message is not an object';
  const keys = message.accountKeys;
  if (!Array.isArray(keys) || keys.length === 0 || !keys.every((key) => typeof key === 'string')) {
    return 'result.transaction.message.accountKeys is not a non-empty array of addresses';
  }
  if (!Array.isArray(message.instructions)) return 'result.transaction.message.instructions is not an array';
  const memos: string[] = [];
  for (const [i, ix] of message.instructions.entries()) {
    const at = `result.transaction.message.instructions[${i}]`;
    if (!isRecord(ix)) return `${at} is not an object`;
    const index = ix.programIdIndex;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= keys.length) {
      return `${at}.programIdIndex is not an index into the ${keys.length} account keys`;
    }
    if (typeof ix.data !== 'string') return `${at}.data is not a string`;
    if (MEMO_PROGRAMS.has(keys[index])) memos.push(ix.data);
  }
  return { failed: result.meta.err !== null, signer: keys[0], memos };
}

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** Bitcoin-alphabet base58 (Solana addresses, signatures, instruction data); undefined when invalid. */
export function base58Decode(text: string): Uint8Array | undefined {
  let value = 0n;
  for (const char of text) {
    const digit = BASE58.indexOf(char);
    if (digit < 0) return undefined;
    value = value * 58n + BigInt(digit);
  }
  const bytes: number[] = [];
  for (; value > 0n; value >>= 8n) bytes.unshift(Number(value & 0xffn));
  for (let i = 0; i < text.length && text[i] === '1'; i++) bytes.unshift(0);
  return Uint8Array.from(bytes);
}

function walletLimbs(wallet: unknown): [bigint, bigint] | undefined {
  const key = typeof wallet === 'string' ? base58Decode(wallet) : undefined;
  if (!key || key.length !== 32) return undefined;
  const hex = Array.from(key, (b) => b.toString(16).padStart(2, '0')).join('');
  return [BigInt('0x' + hex.slice(0, 32)), BigInt('0x' + hex.slice(32))];
}

/** A notification id (ULID, Crockford base32) as the 128-bit integer the circuit takes. */
export function ulidValue(id: unknown): bigint | undefined {
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  if (typeof id !== 'string' || !/^[0-7][0-9A-HJKMNP-TV-Z]{25}$/i.test(id)) return undefined;
  let value = 0n;
  for (const char of id.toUpperCase()) value = (value << 5n) | BigInt(alphabet.indexOf(char));
  return value;
}

// Poseidon over BN254 with two inputs (t = 3, 8 full and 57 partial rounds, x^5), as circomlib's
// poseidon.circom. Its round constants and MDS matrix are the reference Grain LFSR output
// (generate_parameters_grain.sage 1 0 254 3 8 57), regenerated here rather than shipped.
const mod = (a: bigint) => ((a % P) + P) % P;
const pow5 = (a: bigint) => {
  const a2 = (a * a) % P;
  return (((a2 * a2) % P) * a) % P;
};

function inverse(a: bigint): bigint {
  let [t, next, r, rest] = [0n, 1n, P, mod(a)];
  while (rest !== 0n) {
    const q = r / rest;
    [t, next] = [next, t - q * next];
    [r, rest] = [rest, r - q * rest];
  }
  return mod(t);
}

function grainConstants(t: number, fullRounds: number, partialRounds: number): { C: bigint[]; M: bigint[][] } {
  const bits: number[] = [];
  const push = (value: number, width: number) => bits.push(...[...value.toString(2).padStart(width, '0')].map(Number));
  push(1, 2); // prime field
  push(0, 4); // x^alpha s-box
  push(254, 12);
  push(t, 12);
  push(fullRounds, 10);
  push(partialRounds, 10);
  bits.push(...Array(30).fill(1));
  let head = 0;
  const step = () => {
    const bit = bits[head + 62] ^ bits[head + 51] ^ bits[head + 38] ^ bits[head + 23] ^ bits[head + 13] ^ bits[head];
    bits.push(bit);
    head++;
    return bit;
  };
  for (let i = 0; i < 160; i++) step();
  // Self-shrinking: of each pair of bits, the second is output when the first is 1.
  const nextBit = () => {
    for (;;) {
      const keep = step();
      const bit = step();
      if (keep) return bit;
    }
  };
  const number = () => {
    let value = 0n;
    for (let i = 0; i < 254; i++) value = (value << 1n) | BigInt(nextBit());
    return value;
  };
  const C: bigint[] = [];
  while (C.length < (fullRounds + partialRounds) * t) {
    const candidate = number();
    if (candidate < P) C.push(candidate);
  }
  const xy = Array.from({ length: 2 * t }, () => mod(number()));
  const M = xy.slice(0, t).map((x) => xy.slice(t).map((y) => inverse(x + y)));
  return { C, M };
}

let constants: { C: bigint[]; M: bigint[][] } | undefined;

/** Poseidon(left, right), as circomlib's Poseidon(2). */
export function poseidon2(left: bigint, right: bigint): bigint {
  const { C, M } = (constants ??= grainConstants(3, 8, 57));
  let state = [0n, left, right];
  for (let round = 0; round < 65; round++) {
    state = state.map((x, i) => (x + C[round * 3 + i]) % P);
    if (round < 4 || round >= 61) state = state.map(pow5);
    else state[0] = pow5(state[0]);
    state = M.map((row) => (row[0] * state[0] + row[1] * state[1] + row[2] * state[2]) % P);
  }
  return state[0];
}
