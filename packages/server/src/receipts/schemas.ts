import { Type } from '@sinclair/typebox';

/** A BN254 field element: 0x and 64 hex digits. */
const FieldHex = (description = 'A BN254 field element: 0x and 64 hex digits') => Type.String({ pattern: '^0x[0-9a-f]{64}$', description });

/** GET /v1/notifications/:id/receipt: everything needed to verify the receipt without Herald. */
export const ReceiptResponse = Type.Object(
  {
    notificationId: Type.String(),
    wallet: Type.String(),
    status: Type.Literal('confirmed'),
    commitment: FieldHex("The notification's leaf: Poseidon(id, Poseidon(wallet limbs), channel, delivered_at, content hash, salt)"),
    root: FieldHex('Merkle root of the batch, written on chain in the memo'),
    leafIndex: Type.Integer({ minimum: 0, description: "The leaf's position in the batch (bit d = right child on level d)" }),
    merklePath: Type.Array(FieldHex(), { description: 'Sibling hashes from the leaf up to the root' }),
    proof: Type.Object(
      {
        pi_a: Type.Array(Type.String()),
        pi_b: Type.Array(Type.Array(Type.String())),
        pi_c: Type.Array(Type.String()),
        protocol: Type.String(),
        curve: Type.String(),
      },
      { description: 'Groth16 proof (snarkjs JSON)' },
    ),
    publicSignals: Type.Array(Type.String(), {
      description: '[commitment, root, notification id as integer, wallet high 128 bits, wallet low 128 bits], decimal (receipts proven before the commitment was a signal: the last four)',
    }),
    tx: Type.String({ description: 'Signature of the transaction holding the memo' }),
    cluster: Type.String({ description: '`litesvm` (in-process development chain) or the configured cluster name' }),
    signer: Type.String({ description: 'The gateway key that signed the memo transaction' }),
    batchId: Type.String(),
    memo: Type.String({ description: 'herald:receipt:v1:<batchId>:<root>' }),
    confirmedAt: Type.String({ format: 'date-time', description: "When the batch's memo was confirmed" }),
    verificationKey: Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, description: 'Groth16 verification key (snarkjs JSON)' }),
  },
  { description: 'A confirmed on-chain receipt' },
);
