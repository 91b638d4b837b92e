/**
 * The receipt child process: Poseidon hashing (leaves, trees) and Groth16 proving, off the
 * gateway's event loop. A process rather than a worker thread: snarkjs spreads a proof over
 * threads of its own, which it can only start from a main thread. circomlibjs and snarkjs load
 * lazily, on the first request that needs them. Requests arrive over IPC as `{id, op, args}`;
 * answers are `{id, result}` or `{id, error}`.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { gunzipSync } from 'node:zlib';
import type { CircuitArtifacts } from './circuit-artifacts.js';
import type { LeafFields } from './field-encoding.js';
import { buildMerkleTree, pathBits, TREE_DEPTH } from './merkle-tree.js';

export interface ProofRequest {
  fields: LeafFields;
  root: bigint;
  leafIndex: number;
  path: bigint[];
}

export type CryptoRequest =
  | { op: 'check'; args: null }
  | { op: 'leaves'; args: LeafFields[] }
  | { op: 'tree'; args: bigint[] }
  | { op: 'prove'; args: ProofRequest };

type Hash = (inputs: bigint[]) => bigint;
type Prove = (request: ProofRequest) => Promise<{ proof: unknown; publicSignals: string[] }>;

const artifacts = JSON.parse(process.argv[2]) as CircuitArtifacts;
let hashing: Promise<Hash> | undefined;
let proving: Promise<Prove> | undefined;

async function loadHash(): Promise<Hash> {
  const { buildPoseidon } = await import('circomlibjs');
  const poseidon = await buildPoseidon();
  return (inputs) => poseidon.F.toObject(poseidon(inputs));
}

const sameKey = (a: Record<string, unknown>, b: Record<string, unknown>) =>
  ['nPublic', 'vk_alpha_1', 'vk_beta_2', 'vk_gamma_2', 'vk_delta_2', 'IC'].every((k) => JSON.stringify(a[k]) === JSON.stringify(b[k]));

async function loadProver(): Promise<Prove> {
  const snarkjs = await import('snarkjs');
  const buildWitnessCalculator = createRequire(import.meta.url)(artifacts.witnessCalculator) as (
    code: Uint8Array,
  ) => Promise<{ calculateWTNSBin(input: Record<string, unknown>, sanityCheck: boolean): Promise<Uint8Array> }>;
  const calculator = await buildWitnessCalculator(gunzipSync(readFileSync(artifacts.wasmGz)));
  const zkey = { type: 'mem' as const, data: new Uint8Array(readFileSync(artifacts.zkey)) };
  const verificationKey = JSON.parse(readFileSync(artifacts.verificationKey, 'utf8'));
  // A proof made with one key and published with another would never verify: refuse the pair.
  if (!sameKey(await snarkjs.zKey.exportVerificationKey(zkey), verificationKey)) {
    throw new Error(`the verification key ${artifacts.verificationKey} does not belong to the proving key ${artifacts.zkey}`);
  }
  // The witness calculator is one wasm instance: concurrent calls would overwrite each other's
  // signals, so witnesses are computed one at a time (the proofs themselves may overlap).
  let previous: Promise<unknown> = Promise.resolve();
  return async ({ fields, root, leafIndex, path }) => {
    const input = { root, ...fields, pathElements: path, pathIndices: pathBits(leafIndex, TREE_DEPTH) };
    const witness = previous.then(() => calculator.calculateWTNSBin(input, true));
    previous = witness.catch(() => undefined);
    return snarkjs.groth16.prove(zkey, { type: 'mem', data: await witness });
  };
}

async function handle(request: CryptoRequest): Promise<unknown> {
  if (request.op === 'check' || request.op === 'prove') {
    proving ??= loadProver();
    const prove = await proving;
    return request.op === 'check' ? true : prove(request.args);
  }
  hashing ??= loadHash();
  const hash = await hashing;
  if (request.op === 'leaves') {
    return request.args.map((f) => hash([f.notificationId, hash([f.walletHi, f.walletLo]), f.channel, f.deliveredAt, f.contentHash, f.salt]));
  }
  const tree = buildMerkleTree(request.args, TREE_DEPTH, (left, right) => hash([left, right]));
  return { root: tree.root, paths: request.args.map((_, i) => tree.path(i)) };
}

/**
 * Answers the gateway; a gateway gone meanwhile (killed while a proof ran) ends this process
 * quietly, where writing to its closed channel threw EPIPE as an uncaught error.
 */
function answer(message: object): void {
  if (!process.connected) process.exit(0);
  process.send!(message, undefined, {}, (error) => {
    if (error) process.exit(0);
  });
}

process.on('message', (message: { id: number } & CryptoRequest) => {
  handle(message).then(
    (result) => answer({ id: message.id, result }),
    (error: Error) => answer({ id: message.id, error: error?.message ?? String(error) }),
  );
});
// The gateway went away (even without closing us): nothing is left to answer.
process.on('disconnect', () => process.exit(0));
