import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildMerkleTree, pathBits, rootFromPath, type Hash2 } from './merkle-tree.js';

// Any injective-enough function shows the tree's shape; Poseidon itself is checked in test/receipts.
const P = 2n ** 61n - 1n;
const hash: Hash2 = (left, right) => (left * 1_000_003n + right * 7919n + 17n) % P;

/** The plain definition: every level in full, empty leaves 0. */
function naiveRoot(leaves: bigint[], depth: number): bigint {
  let level = [...leaves, ...Array(2 ** depth - leaves.length).fill(0n)];
  for (let d = 0; d < depth; d++) level = level.flatMap((_, i) => (i % 2 ? [] : [hash(level[i], level[i + 1])]));
  return level[0];
}

describe('fixed-depth Merkle tree', () => {
  it('matches the full-tree definition for every fill, and every path leads to the root', () => {
    for (const count of [1, 2, 3, 5, 8, 13, 16]) {
      const leaves = Array.from({ length: count }, (_, i) => BigInt(i * 31 + 1));
      const tree = buildMerkleTree(leaves, 4, hash);
      assert.equal(tree.root, naiveRoot(leaves, 4), `${count} leaves`);
      leaves.forEach((leaf, i) => {
        const path = tree.path(i);
        assert.equal(path.length, 4);
        assert.equal(rootFromPath(leaf, i, path, hash), tree.root);
      });
    }
  });

  it('detects a wrong leaf, index or sibling', () => {
    const leaves = [11n, 22n, 33n];
    const tree = buildMerkleTree(leaves, 3, hash);
    const path = tree.path(1);
    assert.notEqual(rootFromPath(23n, 1, path, hash), tree.root);
    assert.notEqual(rootFromPath(22n, 0, path, hash), tree.root);
    assert.notEqual(rootFromPath(22n, 1, [path[0] + 1n, ...path.slice(1)], hash), tree.root);
  });

  it('refuses an empty or overfull batch and unknown leaves', () => {
    assert.throws(() => buildMerkleTree([], 3, hash), RangeError);
    assert.throws(() => buildMerkleTree(Array(9).fill(1n), 3, hash), RangeError);
    assert.throws(() => buildMerkleTree([1n], 3, hash).path(1), RangeError);
  });

  it('gives the index as one bit per level, least significant first', () => {
    assert.deepEqual(pathBits(5, 4), [1, 0, 1, 0]);
    assert.deepEqual(pathBits(1023, 10), Array(10).fill(1));
  });
});
