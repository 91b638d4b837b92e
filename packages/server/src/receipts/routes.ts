import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { ApiError } from '../http/errors.js';
import { errorResponses } from '../http/schemas.js';
import { parseField, receiptMemo } from './field-encoding.js';
import { findReceipt, type ReceiptRow } from './receipt-store.js';
import { ReceiptResponse } from './schemas.js';

/** Why a notification has no receipt to show yet (or ever). */
function missing(row: ReceiptRow): ApiError {
  if (!row.write_receipt) return new ApiError('RECEIPT_NOT_FOUND', `Notification ${row.id} did not request a receipt`);
  if (row.receipt_status === 'failed') return new ApiError('RECEIPT_NOT_FOUND', `The receipt of notification ${row.id} failed: ${row.receipt_failure_reason}`);
  return new ApiError('RECEIPT_NOT_FOUND', `The receipt of notification ${row.id} is not written yet (receipt_status ${row.receipt_status})`);
}

/** GET /v1/notifications/:id/receipt. */
export function receiptRoutes(app: FastifyInstance, deps: Deps): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/v1/notifications/:id/receipt',
    {
      schema: {
        tags: ['notifications'],
        summary: 'The on-chain receipt of a notification: commitment, Merkle path, Groth16 proof and transaction',
        params: Type.Object({ id: Type.String({ minLength: 1 }) }),
        response: { 200: ReceiptResponse, ...errorResponses(401, 404, 429) },
      },
    },
    async (request) => {
      const row = await findReceipt(deps.db, request.auth!.protocol.id, request.params.id);
      if (!row) throw new ApiError('NOTIFICATION_NOT_FOUND', `Notification ${request.params.id} not found`);
      if (row.receipt_status !== 'confirmed' || !row.proof || !row.verification_key) throw missing(row);
      return {
        notificationId: row.id,
        wallet: row.wallet,
        status: 'confirmed' as const,
        commitment: row.leaf!,
        root: row.root!,
        leafIndex: row.leaf_index!,
        merklePath: row.merkle_path!,
        proof: row.proof as any,
        publicSignals: row.public_signals!,
        tx: row.tx!,
        cluster: row.cluster!,
        signer: row.signer!,
        batchId: row.batch_id!,
        memo: receiptMemo(row.batch_id!, parseField(row.root!)),
        confirmedAt: row.confirmed_at!.toISOString(),
        verificationKey: row.verification_key,
      };
    },
  );
}
