/** Levels of the receipt circuit's tree (circuits/receipt.circom): 2^10 = 1024 leaves per batch. */
export const TREE_DEPTH = 10;
export const MAX_BATCH_LEAVES = 2 ** TREE_DEPTH;

export type Hash2 = (left: bigint, right: bigint) => bigint;

export interface MerkleTree {
  root: bigint;
  /** The sibling of the leaf's node on each level, from the leaf up (the circuit's pathElements). */
  path(index: number): bigint[];
}

/**
 * A fixed-depth binary Merkle tree over `leaves` (left to right), every missing leaf 0. Only nodes
 * above real leaves are hashed; an empty subtree's hash comes from the precomputed zero chain.
 */
export function buildMerkleTree(leaves: bigint[], depth: number, hash: Hash2): MerkleTree {
  if (leaves.length === 0 || leaves.length > 2 ** depth) throw new RangeError(`a depth-${depth} tree holds 1 to ${2 ** depth} leaves`);
  const zeros = [0n];
  const levels = [leaves.slice()];
  for (let d = 0; d < depth; d++) {
    const below = levels[d];
    const above: bigint[] = [];
    for (let i = 0; i < below.length; i += 2) above.push(hash(below[i], i + 1 < below.length ? below[i + 1] : zeros[d]));
    levels.push(above);
    zeros.push(hash(zeros[d], zeros[d]));
  }
  return {
    root: levels[depth][0],
    path(index) {
      if (!Number.isInteger(index) || index < 0 || index >= leaves.length) throw new RangeError(`no leaf ${index}`);
      return levels.slice(0, depth).map((level, d) => {
        const sibling = (index >> d) ^ 1;
        return sibling < level.length ? level[sibling] : zeros[d];
      });
    },
  };
}

/** The root a leaf and its path lead to (what the circuit and a verifier recompute). */
export function rootFromPath(leaf: bigint, index: number, path: bigint[], hash: Hash2): bigint {
  let node = leaf;
  path.forEach((sibling, d) => {
    node = (index >> d) & 1 ? hash(sibling, node) : hash(node, sibling);
  });
  return node;
}

/** The leaf index as the circuit's pathIndices: one bit per level, least significant first. */
export function pathBits(index: number, depth: number): number[] {
  return Array.from({ length: depth }, (_, d) => (index >> d) & 1);
}
