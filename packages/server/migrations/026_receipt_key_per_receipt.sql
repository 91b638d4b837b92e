-- Each receipt records the verification key its proof needs. A batch's receipts may be proven by
-- workers holding different keys (a batch half proven when a new circuit or key is deployed): the
-- rest are proven with the new key, and every receipt still answers with the key that proved it.
-- Receipts proven before were proven with their batch's key.
ALTER TABLE receipts ADD COLUMN IF NOT EXISTS verification_key_id text;
UPDATE receipts r SET verification_key_id = b.verification_key_id
FROM receipt_batches b
WHERE r.batch_id = b.id AND r.proof IS NOT NULL AND r.verification_key_id IS NULL;
