pragma circom 2.1.0;

// Herald delivery receipt: "this leaf (commitment), under this Merkle root, commits to this
// notification id and this wallet", without revealing the channel, the delivery time, the content
// hash, the salt or where in the tree the leaf sits. The leaf is an output, so a receipt's
// commitment is bound to its proof. Encodings (README.md beside this file):
//   notificationId  the notification's ULID read as a 128-bit integer
//   walletHi/Lo     the wallet's 32 public-key bytes as two big-endian 128-bit limbs
//   leaf            Poseidon(notificationId, Poseidon(walletHi, walletLo), channel, deliveredAt, contentHash, salt)
//   tree            Poseidon(left, right) per level, DEPTH levels, empty leaves are 0
// The circomlib include path is set by build-circuit.mjs (-l node_modules/circomlib/circuits).
include "poseidon.circom";

template HeraldReceipt(depth) {
    signal input root;
    signal input notificationId;
    signal input walletHi;
    signal input walletLo;

    signal input channel;
    signal input deliveredAt;
    signal input contentHash;
    signal input salt;
    signal input pathElements[depth];
    // Bit i is 1 when the node on level i is a right child (the leaf index, least significant bit first).
    signal input pathIndices[depth];
    // The leaf itself, public: the receipt's commitment.
    signal output commitment;

    component walletHash = Poseidon(2);
    walletHash.inputs[0] <== walletHi;
    walletHash.inputs[1] <== walletLo;

    component leaf = Poseidon(6);
    leaf.inputs[0] <== notificationId;
    leaf.inputs[1] <== walletHash.out;
    leaf.inputs[2] <== channel;
    leaf.inputs[3] <== deliveredAt;
    leaf.inputs[4] <== contentHash;
    leaf.inputs[5] <== salt;

    component nodes[depth];
    signal levels[depth + 1];
    signal left[depth];
    signal right[depth];
    commitment <== leaf.out;
    levels[0] <== leaf.out;
    for (var i = 0; i < depth; i++) {
        pathIndices[i] * (1 - pathIndices[i]) === 0;
        left[i] <== levels[i] + pathIndices[i] * (pathElements[i] - levels[i]);
        right[i] <== levels[i] + pathElements[i] - left[i];
        nodes[i] = Poseidon(2);
        nodes[i].inputs[0] <== left[i];
        nodes[i].inputs[1] <== right[i];
        levels[i + 1] <== nodes[i].out;
    }
    root === levels[depth];
}

// 2^10 = 1024 leaves per batch: HERALD_RECEIPT_BATCH_SIZE cannot exceed it.
component main {public [root, notificationId, walletHi, walletLo]} = HeraldReceipt(10);
