import type { Receipt } from '../receipts.js';
import type { RequestCore, RequestOptions } from '../request.js';

/** On-chain proofs of delivery; check one without trusting Herald with `verifyReceipt`. */
export class Receipts {
  constructor(private readonly core: RequestCore) {}

  /**
   * The confirmed receipt of a notification sent with `receipt: true`: commitment, Merkle path,
   * Groth16 proof, transaction and verification key. Until it is confirmed (or when none was asked
   * for, or it failed) this throws HeraldApiError 404 `RECEIPT_NOT_FOUND`, whose message says
   * which; an unknown notification throws `NOTIFICATION_NOT_FOUND`.
   * @example const receipt = await herald.receipts.get(notificationId); const { valid } = await verifyReceipt(receipt);
   */
  get(notificationId: string, options?: RequestOptions): Promise<Receipt> {
    return this.core.request({ method: 'GET', path: `/v1/notifications/${encodeURIComponent(notificationId)}/receipt`, answer: { notificationId: 'string', merklePath: 'array', proof: 'object', publicSignals: 'array', verificationKey: 'object' } }, options);
  }
}
